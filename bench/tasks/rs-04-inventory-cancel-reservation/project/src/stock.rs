/// Units of one SKU: what is on the shelf and how much of it is promised to open orders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stock {
    pub on_hand: u32,
    pub reserved: u32,
}

impl Stock {
    pub fn available(&self) -> u32 {
        self.on_hand - self.reserved
    }

    pub fn receive(&mut self, qty: u32) {
        self.on_hand += qty;
    }

    /// Promise `qty` units to an order; false (and no change) when not enough are available.
    pub fn reserve(&mut self, qty: u32) -> bool {
        if qty > self.available() {
            return false;
        }
        self.reserved += qty;
        true
    }

    /// The order was cancelled: its units are available again.
    pub fn release(&mut self, qty: u32) {
        self.on_hand -= qty;
    }

    /// The order shipped: its units leave the shelf.
    pub fn ship(&mut self, qty: u32) {
        self.reserved -= qty;
        self.on_hand -= qty;
    }
}
