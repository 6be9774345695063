/// A stock-keeping unit code such as `"MUG-RED"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sku(pub String);

impl Sku {
    pub fn new(code: &str) -> Sku {
        Sku(code.trim().to_ascii_uppercase())
    }
}

/// A catalogue entry.
#[derive(Debug, Clone)]
pub struct Item {
    pub sku: Sku,
    pub name: String,
    /// Reorder when available stock falls to this level.
    pub reorder_level: u32,
}
