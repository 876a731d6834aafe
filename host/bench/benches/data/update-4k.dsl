CURRENT_PROGRESS:
  Completed:
    - Listed the repository and found astropy/wcs/wcsapi/wrappers/sliced_wcs.py
    - Reproduced the bug with a celestial frame that does not need sunpy (ICRS with TAN axes)
    - Confirmed the full WCS maps the world point to pixel (49.5, 12.0, ~0)
    - Confirmed the sliced WCS returns a huge first pixel coordinate (1.8e11) for the same point
    - Read SlicedLowLevelWCS.world_to_pixel_values and _pixel_to_world_values_all
  In Progress:
    - Replacing the hard-coded 1.0 for dropped world axes with the world value at the slice
    - Checking that dropped_world_dimensions already holds the value we need
  Remaining:
    - Add a regression test in astropy/wcs/wcsapi/wrappers/tests/test_sliced_wcs.py
    - Run the wcsapi test suite and the coordinates round-trip tests
    - Write a changelog entry under docs/changes/wcs/
    - Check SlicedLowLevelWCS.world_to_pixel with a slice that keeps the spectral axis
    - Re-run the original PR example with sunpy installed, if it becomes available
KEY_LEARNINGS:
  ADD:
    - because it is the root cause: world_to_pixel_values fills dropped world axes with 1.0 instead of their value at the slice
    - because it gives the right value: self.dropped_world_dimensions stores the world coordinate of each dropped axis
    - because it avoids a dead end: pixel_to_world on the sliced WCS is correct, only the inverse is wrong
    - because the tests need it: test_sliced_wcs.py builds WCS objects from header dicts, not FITS files
  ARCHIVE:
    - KL-2 because the repro no longer needs wcs_to_celestial_frame
    - KL-3 because we switched to an ICRS frame that does not need sunpy
    - KL-6 because it is now confirmed and recorded as the root cause
VERBATIM_CONTEXT:
  ADD:
    - because this is the code to change: astropy/wcs/wcsapi/wrappers/sliced_wcs.py => def world_to_pixel_values(self, *world_arrays):
          world_arrays = tuple(map(np.asanyarray, world_arrays))
          world_arrays_new = []
          iworld_curr = -1
          for iworld in range(self._wcs.world_n_dim):
              if iworld in self._world_keep:
                  iworld_curr += 1
                  world_arrays_new.append(world_arrays[iworld_curr])
              else:
                  world_arrays_new.append(1.)

          world_arrays_new = np.broadcast_arrays(*world_arrays_new)
          pixel_arrays = list(self._wcs.world_to_pixel_values(*world_arrays_new))

          for ipixel in range(self._wcs.pixel_n_dim):
              if isinstance(self._slices_pixel[ipixel], slice) and self._slices_pixel[ipixel].start is not None:
                  pixel_arrays[ipixel] -= self._slices_pixel[ipixel].start

          # Detect the case of a length 0 array
          if isinstance(pixel_arrays, np.ndarray) and not pixel_arrays.shape:
              return pixel_arrays
          pixel = tuple(pixel_arrays[ip] for ip in self._pixel_keep)
          if self.pixel_n_dim == 1 and self._wcs.pixel_n_dim > 1:
              pixel = pixel[0]
          return pixel
    - because the fix reads it: dropped_world_dimensions => @property
      def dropped_world_dimensions(self):
          """
          Information describing the dropped world dimensions.
          """
          world_coords = self._pixel_to_world_values_all(*[0]*len(self._pixel_keep))
          dropped_info = defaultdict(list)
    - because the regression test must assert it: expected pixel => (array(49.5), array(12.))
    - because the new test follows this shape: regression test draft => def test_coupled_world_slicing():
          fits_wcs = WCS(header=COUPLED_WCS_HEADER)
          sl = SlicedLowLevelWCS(fits_wcs, 0)
          world = fits_wcs.pixel_to_world_values(0, 0, 0)
          out_pix = sl.world_to_pixel_values(world[0], world[1])
          assert np.allclose(out_pix[0], 0)
          assert np.allclose(out_pix[1], 0)
  ARCHIVE:
    - VC-2 because the failing call is now part of the regression test
