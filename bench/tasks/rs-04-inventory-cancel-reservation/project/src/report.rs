use crate::Inventory;

/// One line per item at or below its reorder level, sorted by SKU.
pub fn reorder_report(inventory: &Inventory) -> Vec<String> {
    let mut lines: Vec<String> = inventory
        .items()
        .filter(|item| inventory.available(&item.sku) <= item.reorder_level)
        .map(|item| {
            format!(
                "{} {}: {} available (reorder at {})",
                item.sku.0,
                item.name,
                inventory.available(&item.sku),
                item.reorder_level
            )
        })
        .collect();
    lines.sort();
    lines
}
