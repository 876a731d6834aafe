CURRENT_PROGRESS:
  Completed:
    - Listed the repository and found astropy/wcs/wcsapi/wrappers/sliced_wcs.py
  In Progress:
    - Reproducing the inconsistent world_to_pixel result
KEY_LEARNINGS:
  ADD:
    - because it is where the bug lives: SlicedLowLevelWCS is in astropy/wcs/wcsapi/wrappers/sliced_wcs.py
    - because the repro failed on it: wcs_to_celestial_frame cannot map HPLN-TAN/HPLT-TAN without sunpy
    - because it limits what we can test: sunpy is not installed in the test environment
    - because it shapes the repro: the PC matrix couples pixel axes 1 and 3
    - because the PR says so: the unsliced WCS returns the right pixel for the same world point
    - because it is a lead: dropped world dimensions are filled with 1.0 in world_to_pixel_values
VERBATIM_CONTEXT:
  ADD:
    - because the repro needs it: header keys => 'PC1_1': 0.0, 'PC1_2': -1.0, 'PC1_3': 0.0,
      'PC2_1': 1.0, 'PC2_2': 0.0, 'PC2_3': -1.0,
    - because it is the failing call: repro call => hl_sliced_wcs.world_to_pixel(pt)
    - because we compare against it: expected output => (array(49.5), array(12.))
