//! Tauri's build step: reads tauri.conf.json, checks that the committed UI bundle
//! (`../papayu-app/ui-dist`) exists and embeds the icons.
fn main() {
    tauri_build::build();
}
