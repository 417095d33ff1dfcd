//! Test fixtures laid out in a temporary store: a fixture tree copied with every file's
//! mtime set in the past, so the stores read them as settled (not still being written).

use std::path::Path;

/// 2026-03-16: long before any test runs.
const SETTLED_AT: u64 = 1_773_619_200;

/// Copy the tree `src` to `dst`, each file settled (`settle`).
pub fn copy_settled(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_settled(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
            settle(&to);
        }
    }
}

/// Set `p`'s mtime in the past.
pub fn settle(p: &Path) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(SETTLED_AT);
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(t).unwrap();
}
