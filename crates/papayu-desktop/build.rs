//! Tauri's build step: reads tauri.conf.json, checks that `../../ui/dist` exists and embeds
//! the icons.
fn main() {
    tauri_build::build();
}
