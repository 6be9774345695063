//! Confinement of the calling process for check commands (they run code the model wrote):
//! writes only beneath the given directories, no TCP, through Linux Landlock. It changes the
//! calling thread and its future children only; it touches no file.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// What confinement this machine gives a check command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Confinement {
    /// Landlock: writes only beneath the allowed directories; with `network`, no TCP either.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: u8,
        /// Whether TCP bind/connect is denied (ABI 4 and later).
        network: bool,
    },
    /// Bubblewrap (`bwrap`): a read-only root with the allowed directories bound writable, in
    /// a network namespace of its own.
    Bubblewrap {
        /// The executable found.
        program: PathBuf,
    },
    /// Nothing is available: checks run as the user.
    None {
        /// Why.
        reason: String,
    },
}

impl Confinement {
    /// One line for `doctor`.
    pub fn describe(&self) -> String {
        match self {
            Confinement::Landlock { abi, network: true } => format!(
                "Landlock ABI {abi}: checks write only in the project and a temp dir, no network"
            ),
            Confinement::Landlock {
                abi,
                network: false,
            } => format!(
                "Landlock ABI {abi}: checks write only in the project and a temp dir (this kernel cannot deny network)"
            ),
            Confinement::Bubblewrap { program } => format!(
                "bubblewrap ({}): checks write only in the project and a temp dir, no network",
                program.display()
            ),
            Confinement::None { reason } => format!("none: checks run unconfined ({reason})"),
        }
    }
}

/// Why the process could not be confined.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// The kernel refused a Landlock call.
    #[error("Landlock refused the ruleset: {0}")]
    Landlock(String),
    /// An allowed directory could not be opened.
    #[error("cannot open `{path}` for the sandbox: {source}")]
    Path {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The Landlock ABI the running kernel supports (0: none).
pub fn landlock_abi() -> u8 {
    // Creating a ruleset with only the filesystem rights of ABI 1 and dropping it is the
    // documented probe; the crate reports what the kernel granted.
    use landlock::{ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
    for (abi, number) in [
        (ABI::V6, 6u8),
        (ABI::V5, 5),
        (ABI::V4, 4),
        (ABI::V3, 3),
        (ABI::V2, 2),
        (ABI::V1, 1),
    ] {
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if created.is_ok() {
            return number;
        }
    }
    0
}

/// The confinement check commands get here: Landlock when the kernel has it, else `bwrap`
/// when `bwrap` (a path the caller found on `PATH`) is given, else none.
pub fn probe(bwrap: Option<&Path>) -> Confinement {
    match landlock_abi() {
        0 => match bwrap {
            Some(p) => Confinement::Bubblewrap {
                program: p.to_owned(),
            },
            None => Confinement::None {
                reason: "the kernel has no Landlock and bubblewrap (bwrap) is not installed"
                    .to_owned(),
            },
        },
        abi => Confinement::Landlock {
            abi,
            network: abi >= 4,
        },
    }
}

/// Device files a test run may write to: the null and zero devices, terminals.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Confine the calling thread and its future children with Landlock: read and execute
/// anywhere, write only beneath `writable` (and the usual devices), and — when `deny_network`
/// and the kernel can — no TCP bind or connect. Returns what was enforced. Call it in a
/// single-threaded process right before `exec`.
pub fn confine_current_process(
    writable: &[PathBuf],
    deny_network: bool,
) -> Result<Confinement, ConfineError> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    };
    let err = |e: landlock::RulesetError| ConfineError::Landlock(e.to_string());
    let abi = ABI::V6;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if deny_network {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let open = |path: &Path| {
        PathFd::new(path).map_err(|e| ConfineError::Path {
            path: path.to_owned(),
            source: std::io::Error::other(e.to_string()),
        })
    };
    created = created
        .add_rule(PathBeneath::new(
            open(Path::new("/"))?,
            AccessFs::from_read(abi),
        ))
        .map_err(err)?;
    for dir in writable {
        created = created
            .add_rule(PathBeneath::new(open(dir)?, AccessFs::from_all(abi)))
            .map_err(err)?;
    }
    for dev in DEVICES {
        // A device this machine lacks is simply not allowed.
        if let Ok(fd) = PathFd::new(dev) {
            created = created
                .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
                .map_err(err)?;
        }
    }
    let status = created.restrict_self().map_err(err)?;
    let version = landlock_abi();
    Ok(match status.ruleset {
        RulesetStatus::NotEnforced => Confinement::None {
            reason: "the kernel did not enforce the Landlock ruleset".to_owned(),
        },
        _ => Confinement::Landlock {
            abi: version,
            network: deny_network && version >= 4,
        },
    })
}
