//! One module per command: an `Args` struct and a `run` function.

pub mod schema;
pub mod validate;

use papayu_protocol::ProtocolVersion;

/// The protocol version for a number the user gave (clap already bounds it to 1..=3).
pub fn version(n: u8) -> anyhow::Result<ProtocolVersion> {
    ProtocolVersion::from_number(n).ok_or_else(|| {
        crate::exit::UsageError(format!("protocol version must be 1, 2 or 3, not {n}")).into()
    })
}
