//! The components a binary carries, compressed, for those who write them out (`workmem
//! component`, the benches): DEFLATE makes the three a third of their size (2.69 MB to
//! 0.86 MB of the CLI). The runtime never inflates them: it runs what the build script
//! compiled from them (`precompiled`).

use std::sync::OnceLock;

/// A component (or core module) built into the binary, inflated on first use.
pub struct Embedded {
    deflated: &'static [u8],
    inflated: OnceLock<Vec<u8>>,
}

impl Embedded {
    pub(crate) const fn new(deflated: &'static [u8]) -> Self {
        Embedded { deflated, inflated: OnceLock::new() }
    }

    /// The component's bytes, as built.
    pub fn bytes(&self) -> &[u8] {
        self.inflated.get_or_init(|| {
            // The stream was written by this crate's build script, so it always inflates.
            miniz_oxide::inflate::decompress_to_vec(self.deflated).expect("a component the build script deflated inflates")
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_embedded_component_inflates_to_a_component() {
        let bytes = crate::COMPONENT.bytes();
        assert_eq!(&bytes[..8], b"\0asm\x0d\0\x01\0", "a component's preamble (version 0xd, layer 1)");
        assert!(crate::COMPONENT.deflated.len() < bytes.len() / 2, "DEFLATE halves a component at least");
    }
}
