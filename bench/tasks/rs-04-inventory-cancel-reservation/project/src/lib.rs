//! A small warehouse inventory: items, stock levels, order reservations and a reorder report.

mod item;
mod report;
mod stock;

use std::collections::HashMap;

pub use item::{Item, Sku};
pub use report::reorder_report;
pub use stock::Stock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReservationId(u64);

#[derive(Debug, PartialEq, Eq)]
pub enum InventoryError {
    UnknownSku(Sku),
    NotEnoughStock {
        sku: Sku,
        wanted: u32,
        available: u32,
    },
    UnknownReservation(ReservationId),
}

#[derive(Debug, Default)]
pub struct Inventory {
    items: HashMap<Sku, Item>,
    stock: HashMap<Sku, Stock>,
    reservations: HashMap<ReservationId, (Sku, u32)>,
    next_reservation: u64,
}

impl Inventory {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add_item(&mut self, sku: &str, name: &str, reorder_level: u32) -> Sku {
        let sku = Sku::new(sku);
        let item = Item {
            sku: sku.clone(),
            name: name.to_owned(),
            reorder_level,
        };
        self.items.insert(sku.clone(), item);
        self.stock.entry(sku.clone()).or_default();
        sku
    }

    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.items.values()
    }

    pub fn available(&self, sku: &Sku) -> u32 {
        self.stock.get(sku).map_or(0, Stock::available)
    }

    pub fn stock(&self, sku: &Sku) -> Option<Stock> {
        self.stock.get(sku).copied()
    }

    pub fn receive(&mut self, sku: &Sku, qty: u32) -> Result<(), InventoryError> {
        self.stock_mut(sku)?.receive(qty);
        Ok(())
    }

    pub fn reserve(&mut self, sku: &Sku, qty: u32) -> Result<ReservationId, InventoryError> {
        let stock = self.stock_mut(sku)?;
        if !stock.reserve(qty) {
            let available = stock.available();
            return Err(InventoryError::NotEnoughStock {
                sku: sku.clone(),
                wanted: qty,
                available,
            });
        }
        self.next_reservation += 1;
        let id = ReservationId(self.next_reservation);
        self.reservations.insert(id, (sku.clone(), qty));
        Ok(id)
    }

    pub fn cancel(&mut self, id: ReservationId) -> Result<(), InventoryError> {
        let (sku, qty) = self.take_reservation(id)?;
        self.stock_mut(&sku)?.release(qty);
        Ok(())
    }

    pub fn ship(&mut self, id: ReservationId) -> Result<(), InventoryError> {
        let (sku, qty) = self.take_reservation(id)?;
        self.stock_mut(&sku)?.ship(qty);
        Ok(())
    }

    fn take_reservation(&mut self, id: ReservationId) -> Result<(Sku, u32), InventoryError> {
        self.reservations
            .remove(&id)
            .ok_or(InventoryError::UnknownReservation(id))
    }

    fn stock_mut(&mut self, sku: &Sku) -> Result<&mut Stock, InventoryError> {
        self.stock
            .get_mut(sku)
            .ok_or_else(|| InventoryError::UnknownSku(sku.clone()))
    }
}
