//! GGUF header checks and checksums, run **before** a file is handed to llama.cpp, whose
//! assertions abort the process and cannot be caught from Rust.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::LlmError;

/// Smallest file that can hold a GGUF header (magic, version, two counts).
const HEADER_BYTES: u64 = 24;
/// Sanity bounds: no real model has more tensors or metadata entries than this.
const MAX_TENSORS: u64 = 1 << 20;
const MAX_KV: u64 = 1 << 20;
/// Longest string (key, value, tensor name) accepted in the header.
const MAX_STRING: u64 = 64 << 20;
/// Most dimensions of a tensor (ggml's `GGML_MAX_DIMS`).
const MAX_DIMS: u32 = 4;

/// What the GGUF header says, as far as papayu reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GgufInfo {
    /// File size in bytes.
    pub size: u64,
    /// GGUF format version (2 or 3).
    pub version: u32,
    /// Number of tensors.
    pub tensors: u64,
    /// Number of metadata entries.
    pub metadata: u64,
    /// `general.architecture`, when present.
    pub architecture: Option<String>,
    /// `general.name`, when present.
    pub name: Option<String>,
    /// Whether the model carries a chat template (`tokenizer.chat_template`).
    pub has_chat_template: bool,
}

fn invalid(path: &Path, message: impl Into<String>) -> LlmError {
    LlmError::ModelInvalid {
        path: path.display().to_string(),
        message: message.into(),
    }
}

struct Reader<'p, R> {
    inner: R,
    path: &'p Path,
    size: u64,
}

impl<R: Read + Seek> Reader<'_, R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], LlmError> {
        let mut buf = [0u8; N];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| invalid(self.path, format!("the GGUF header is cut short ({e})")))?;
        Ok(buf)
    }
    fn u32(&mut self) -> Result<u32, LlmError> {
        Ok(u32::from_le_bytes(self.bytes()?))
    }
    fn u64(&mut self) -> Result<u64, LlmError> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }
    fn skip(&mut self, n: u64) -> Result<(), LlmError> {
        let pos = self.position()?;
        if pos.saturating_add(n) > self.size {
            return Err(invalid(self.path, "the GGUF header is cut short"));
        }
        let offset =
            i64::try_from(n).map_err(|_| invalid(self.path, "a GGUF length is too large"))?;
        self.inner
            .seek(SeekFrom::Current(offset))
            .map_err(|e| invalid(self.path, e.to_string()))?;
        Ok(())
    }
    fn position(&mut self) -> Result<u64, LlmError> {
        self.inner
            .stream_position()
            .map_err(|e| invalid(self.path, e.to_string()))
    }
    fn string_len(&mut self) -> Result<u64, LlmError> {
        let len = self.u64()?;
        if len > MAX_STRING {
            return Err(invalid(
                self.path,
                format!("a GGUF string claims {len} bytes"),
            ));
        }
        Ok(len)
    }
    fn string(&mut self) -> Result<String, LlmError> {
        let len = self.string_len()?;
        let pos = self.position()?;
        if pos.saturating_add(len) > self.size {
            return Err(invalid(self.path, "the GGUF header is cut short"));
        }
        let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0)];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| invalid(self.path, format!("the GGUF header is cut short ({e})")))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }
    /// Skip one metadata value of GGUF type `ty`.
    fn skip_value(&mut self, ty: u32, depth: u32) -> Result<(), LlmError> {
        match ty {
            0 | 1 | 7 => self.skip(1), // u8, i8, bool
            2 | 3 => self.skip(2),     // u16, i16
            4..=6 => self.skip(4),     // u32, i32, f32
            10..=12 => self.skip(8),   // u64, i64, f64
            8 => {
                let len = self.string_len()?;
                self.skip(len)
            }
            9 if depth == 0 => {
                let item = self.u32()?;
                let n = self.u64()?;
                match item {
                    0 | 1 | 7 => self.skip(n),
                    2 | 3 => self.skip(n.saturating_mul(2)),
                    4..=6 => self.skip(n.saturating_mul(4)),
                    10..=12 => self.skip(n.saturating_mul(8)),
                    8 => {
                        for _ in 0..n {
                            let len = self.string_len()?;
                            self.skip(len)?;
                        }
                        Ok(())
                    }
                    other => Err(invalid(
                        self.path,
                        format!("unknown GGUF array item type {other}"),
                    )),
                }
            }
            other => Err(invalid(
                self.path,
                format!("unknown GGUF value type {other}"),
            )),
        }
    }
}

/// Bytes per block and elements per block of the ggml tensor types papayu knows; `None` for
/// others (their size is then not checked).
fn type_block(ty: u32) -> Option<(u64, u64)> {
    Some(match ty {
        0 => (4, 1),     // F32
        1 => (2, 1),     // F16
        2 => (18, 32),   // Q4_0
        3 => (20, 32),   // Q4_1
        6 => (22, 32),   // Q5_0
        7 => (24, 32),   // Q5_1
        8 => (34, 32),   // Q8_0
        9 => (36, 32),   // Q8_1
        10 => (84, 256), // Q2_K
        11 => (110, 256),
        12 => (144, 256),
        13 => (176, 256),
        14 => (210, 256),
        15 => (292, 256),
        30 => (2, 1), // BF16
        _ => return None,
    })
}

/// Check that `path` is a complete GGUF model file **without** llama.cpp: it exists, is a
/// regular file, starts with the `GGUF` magic and a supported version, its header parses, and
/// every tensor's data lies inside the file (a truncated download is caught here).
///
/// Errors: [`LlmError::ModelNotFound`] when there is no such file, [`LlmError::ModelInvalid`]
/// otherwise.
pub fn check_gguf(path: &Path) -> Result<GgufInfo, LlmError> {
    let meta = match fs_err::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LlmError::ModelNotFound {
                path: path.display().to_string(),
            });
        }
        Err(e) => return Err(invalid(path, e.to_string())),
    };
    if !meta.is_file() {
        return Err(invalid(path, "not a regular file"));
    }
    let size = meta.len();
    if size < HEADER_BYTES {
        return Err(invalid(
            path,
            format!("{size} bytes is too small for a GGUF model"),
        ));
    }
    let file = fs_err::File::open(path).map_err(|e| invalid(path, e.to_string()))?;
    let mut r = Reader {
        inner: BufReader::new(file),
        path,
        size,
    };
    if &r.bytes::<4>()? != b"GGUF" {
        return Err(invalid(
            path,
            "not a GGUF file (the first four bytes are not `GGUF`)",
        ));
    }
    let version = r.u32()?;
    if !(2..=3).contains(&version) {
        return Err(invalid(
            path,
            format!("unsupported GGUF version {version} (expected 2 or 3)"),
        ));
    }
    let tensors = r.u64()?;
    let metadata = r.u64()?;
    if tensors == 0 || tensors > MAX_TENSORS || metadata > MAX_KV {
        return Err(invalid(
            path,
            format!("implausible GGUF header ({tensors} tensors, {metadata} metadata entries)"),
        ));
    }
    let mut info = GgufInfo {
        size,
        version,
        tensors,
        metadata,
        architecture: None,
        name: None,
        has_chat_template: false,
    };
    let mut alignment = 32u64;
    for _ in 0..metadata {
        let key = r.string()?;
        let ty = r.u32()?;
        match (key.as_str(), ty) {
            ("general.architecture", 8) => info.architecture = Some(r.string()?),
            ("general.name", 8) => info.name = Some(r.string()?),
            ("general.alignment", 4) => alignment = u64::from(r.u32()?),
            ("tokenizer.chat_template", 8) => {
                info.has_chat_template = true;
                r.skip_value(ty, 0)?;
            }
            _ => r.skip_value(ty, 0)?,
        }
    }
    if alignment == 0 || !alignment.is_power_of_two() {
        return Err(invalid(path, format!("GGUF alignment {alignment}")));
    }
    let mut data_end = 0u64;
    for _ in 0..tensors {
        let name_len = r.string_len()?;
        r.skip(name_len)?;
        let dims = r.u32()?;
        if dims == 0 || dims > MAX_DIMS {
            return Err(invalid(path, format!("a tensor has {dims} dimensions")));
        }
        let mut elements = 1u64;
        for _ in 0..dims {
            elements = elements.saturating_mul(r.u64()?);
        }
        let ty = r.u32()?;
        let offset = r.u64()?;
        let bytes = type_block(ty).map_or(1, |(block_bytes, block_elems)| {
            elements.div_ceil(block_elems).saturating_mul(block_bytes)
        });
        data_end = data_end.max(offset.saturating_add(bytes));
    }
    let header_end = r.position()?;
    let data_start = header_end.div_ceil(alignment).saturating_mul(alignment);
    let needed = data_start.saturating_add(data_end);
    if needed > size {
        return Err(invalid(
            path,
            format!(
                "the file is truncated: its tensors need {needed} bytes but it has {size} (download it again)"
            ),
        ));
    }
    Ok(info)
}

/// The sha256 of a file, as 64 lowercase hex digits.
pub fn sha256_file(path: &Path) -> Result<String, LlmError> {
    let mut file = fs_err::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => LlmError::ModelNotFound {
            path: path.display().to_string(),
        },
        _ => invalid(path, e.to_string()),
    })?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| invalid(path, e.to_string()))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// [`check_gguf`], then the checksum against `expected_sha256`.
pub fn verify_model(path: &Path, expected_sha256: &str) -> Result<GgufInfo, LlmError> {
    let info = check_gguf(path)?;
    let actual = sha256_file(path)?;
    if !actual.eq_ignore_ascii_case(expected_sha256) {
        return Err(invalid(
            path,
            format!("sha256 {actual} does not match the expected {expected_sha256}"),
        ));
    }
    Ok(info)
}
