use inventory::{reorder_report, Inventory, InventoryError, Sku, Stock};

fn shop() -> (Inventory, Sku, Sku) {
    let mut inv = Inventory::new();
    let mug = inv.add_item("mug-red", "Red mug", 5);
    let tee = inv.add_item("TEE-L", "T-shirt L", 2);
    inv.receive(&mug, 20).unwrap();
    inv.receive(&tee, 3).unwrap();
    (inv, mug, tee)
}

#[test]
fn reserve_lowers_available_but_not_on_hand() {
    let (mut inv, mug, _) = shop();
    inv.reserve(&mug, 8).unwrap();
    assert_eq!(inv.available(&mug), 12);
    assert_eq!(
        inv.stock(&mug),
        Some(Stock {
            on_hand: 20,
            reserved: 8
        })
    );
}

#[test]
fn cannot_reserve_more_than_available() {
    let (mut inv, _, tee) = shop();
    let err = inv.reserve(&tee, 4).unwrap_err();
    assert_eq!(
        err,
        InventoryError::NotEnoughStock {
            sku: tee.clone(),
            wanted: 4,
            available: 3
        }
    );
}

#[test]
fn cancel_gives_the_units_back() {
    let (mut inv, mug, _) = shop();
    let id = inv.reserve(&mug, 8).unwrap();
    inv.cancel(id).unwrap();
    assert_eq!(inv.available(&mug), 20);
    assert_eq!(
        inv.stock(&mug),
        Some(Stock {
            on_hand: 20,
            reserved: 0
        })
    );
    assert_eq!(inv.cancel(id), Err(InventoryError::UnknownReservation(id)));
}

#[test]
fn ship_removes_the_units() {
    let (mut inv, mug, _) = shop();
    let id = inv.reserve(&mug, 8).unwrap();
    inv.ship(id).unwrap();
    assert_eq!(
        inv.stock(&mug),
        Some(Stock {
            on_hand: 12,
            reserved: 0
        })
    );
}

#[test]
fn reorder_report_lists_low_items() {
    let (mut inv, mug, tee) = shop();
    let keep = inv.reserve(&mug, 15).unwrap();
    let dropped = inv.reserve(&tee, 2).unwrap();
    inv.cancel(dropped).unwrap();
    assert_eq!(
        reorder_report(&inv),
        vec!["MUG-RED Red mug: 5 available (reorder at 5)".to_owned()]
    );
    inv.ship(keep).unwrap();
    assert_eq!(inv.available(&mug), 5);
}
