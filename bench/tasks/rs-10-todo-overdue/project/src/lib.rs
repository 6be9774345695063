//! A todo list with due dates.

mod date;
mod list;

pub use date::{Date, DateError};
pub use list::{Todo, TodoId, TodoList};
