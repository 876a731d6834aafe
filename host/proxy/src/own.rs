//! workmem's own tools, which the proxy offers the model beside the client's and never shows
//! the client.

/// Whether `name` is one of workmem's own tools, offered to the model beside the client's and
/// never shown to it.
pub(crate) fn own_tool(name: &str) -> bool {
    workmem_agent::tools::OWN.contains(&name)
}
