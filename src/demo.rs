//! The bundled demo store (`assets/demo/`, embedded in the binary) and `--demo`, which copies
//! it into a private temporary directory so nothing the user does touches the originals.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;

use include_dir::{Dir, DirEntry, include_dir};

use crate::error::{Error, Result};
use crate::store::Roots;

static DEMO: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/assets/demo");

/// A private copy of the demo store; removed when dropped.
pub struct DemoStore {
    dir: tempfile::TempDir,
}

impl DemoStore {
    /// Copy the demo into a fresh 0700 temporary directory.
    pub fn create() -> Result<DemoStore> {
        let dir = tempfile::Builder::new()
            .prefix("spool-demo-")
            .tempdir()
            .map_err(|e| Error::io("creating", std::env::temp_dir(), e))?;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|e| Error::io("securing", dir.path(), e))?;
        copy_dir(&DEMO, dir.path())?;
        Ok(DemoStore { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// All three store roots inside the copy.
    pub fn roots(&self) -> Roots {
        Roots::all_in(self.dir.path())
    }
}

fn copy_dir(dir: &Dir<'_>, dest_root: &Path) -> Result<()> {
    for entry in dir.entries() {
        let target = dest_root.join(entry.path());
        match entry {
            DirEntry::Dir(d) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(&target)
                    .map_err(|e| Error::io("creating", &target, e))?;
                copy_dir(d, dest_root)?;
            }
            DirEntry::File(f) => {
                if f.path().file_name().is_some_and(|n| n == ".gitkeep") {
                    continue;
                }
                std::fs::write(&target, f.contents())
                    .map_err(|e| Error::io("writing", &target, e))?;
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| Error::io("securing", &target, e))?;
            }
        }
    }
    Ok(())
}
