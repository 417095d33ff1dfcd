//! The inotify table: a path rebuilt from a watch descriptor's chain of names, a removed
//! directory dropped, a lost queue reported, and the same against the kernel.

use super::*;
use std::fs;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// One event as the kernel lays it out: the header, then the name padded with NULs.
fn event(wd: i32, mask: u32, name: &str) -> Vec<u8> {
    let padded = if name.is_empty() {
        0
    } else {
        (name.len() + 1).div_ceil(16) * 16
    };
    let mut b = Vec::new();
    b.extend_from_slice(&wd.to_ne_bytes());
    b.extend_from_slice(&mask.to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b.extend_from_slice(&(padded as u32).to_ne_bytes());
    b.extend_from_slice(name.as_bytes());
    b.resize(HEADER + padded, 0);
    b
}

/// `/s` (1) holds the collection `c1` (2), which holds the session `aa01` (3).
fn three() -> Table {
    let mut t = Table::default();
    assert!(t.insert(1, None, OsStr::new("/s")));
    assert!(t.insert(2, Some(1), OsStr::new("c1")));
    assert!(t.insert(3, Some(2), OsStr::new("aa01")));
    t
}

#[test]
fn a_path_is_rebuilt_from_the_chain_of_names() {
    let t = three();
    assert_eq!(t.path(3), Some(PathBuf::from("/s/c1/aa01")));
    assert_eq!(t.path(1), Some(PathBuf::from("/s")));
    assert_eq!(t.path(9), None);

    let mut buf = event(3, libc::IN_MODIFY, "messages.jsonl");
    buf.extend(event(2, libc::IN_CREATE | libc::IN_ISDIR, "aa02"));
    buf.extend(event(1, libc::IN_ATTRIB, ""));
    let mut t = t;
    let mut hits = Hits::default();
    t.apply(&buf, &mut hits);
    assert_eq!(
        hits.paths,
        [
            PathBuf::from("/s/c1/aa01/messages.jsonl"),
            PathBuf::from("/s/c1/aa02"),
            PathBuf::from("/s"),
        ]
    );
    assert!(!hits.lost);
}

/// Registered again (a rescan's walk): not new, and the name is not stored twice. Moved
/// within the store and registered at its new place: the new path.
#[test]
fn a_directory_registered_again_keeps_one_entry() {
    let mut t = three();
    let bytes = t.names.len();
    assert!(!t.insert(3, Some(2), OsStr::new("aa01")));
    assert_eq!(t.names.len(), bytes);
    assert!(!t.insert(3, Some(1), OsStr::new("moved")));
    assert_eq!(t.path(3), Some(PathBuf::from("/s/moved")));
    assert_eq!(t.len(), 3);
}

#[test]
fn a_removed_directory_is_dropped() {
    let mut t = three();
    let mut hits = Hits::default();
    // `rm -r aa01`: its own deletion (named), then the kernel's removal of its watch.
    let mut buf = event(3, libc::IN_DELETE_SELF, "");
    buf.extend(event(3, libc::IN_IGNORED, ""));
    buf.extend(event(3, libc::IN_MODIFY, "late"));
    t.apply(&buf, &mut hits);
    assert_eq!(hits.paths, [PathBuf::from("/s/c1/aa01")]);
    assert_eq!(t.len(), 2);
    assert_eq!(t.path(3), None);
    assert_eq!(t.path(2), Some(PathBuf::from("/s/c1")));
}

/// Names of removed directories are packed away once most of the bytes are dead.
#[test]
fn the_names_of_removed_directories_are_given_back() {
    let mut t = Table::default();
    t.insert(1, None, OsStr::new("/s"));
    let mut hits = Hits::default();
    for wd in 2..2000 {
        t.insert(wd, Some(1), OsStr::new("0123456789abcdef01234567"));
        t.apply(&event(wd, libc::IN_IGNORED, ""), &mut hits);
    }
    assert!(t.names.len() < 8192, "{} bytes kept", t.names.len());
    t.insert(5000, Some(1), OsStr::new("kept"));
    assert_eq!(t.path(5000), Some(PathBuf::from("/s/kept")));
}

#[test]
fn an_overflowed_queue_is_reported_as_lost() {
    let mut t = three();
    let mut hits = Hits::default();
    t.apply(&event(-1, libc::IN_Q_OVERFLOW, ""), &mut hits);
    assert!(hits.lost);
    assert!(hits.paths.is_empty());
}

/// Until `want` is named (5 s at most).
fn until(hits: &Mutex<Hits>, rx: &mpsc::Receiver<()>, want: &Path) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        let _ = rx.recv_timeout(Duration::from_millis(100));
        if hits.lock().unwrap().paths.iter().any(|p| p == want) {
            return true;
        }
    }
    false
}

/// Against the kernel: a file written in a subdirectory is named by its full path, a
/// deleted subdirectory leaves the table, and a symlink below a root is not registered.
#[test]
fn the_kernel_names_paths_and_drops_removed_directories() {
    let d = tempfile::tempdir().unwrap();
    let (root, sub) = (d.path().join("s"), d.path().join("s/c1"));
    fs::create_dir_all(&sub).unwrap();
    std::os::unix::fs::symlink(&sub, d.path().join("s/link")).unwrap();
    let hits: Arc<Mutex<Hits>> = Arc::default();
    let (tx, rx) = mpsc::channel();
    let mut b = Backend::new(hits.clone(), tx).unwrap();
    let Reg::Done { handle: top, new } = b.register(&root, None) else {
        panic!("root not registered");
    };
    assert!(new);
    assert!(matches!(
        b.register(&sub, Some(top)),
        Reg::Done { new: true, .. }
    ));
    assert!(matches!(
        b.register(&sub, Some(top)),
        Reg::Done { new: false, .. }
    ));
    assert!(matches!(
        b.register(&root.join("link"), Some(top)),
        Reg::Gone
    ));
    assert!(matches!(
        b.register(&root.join("none"), Some(top)),
        Reg::Gone
    ));
    assert_eq!(b.table().lock().unwrap().len(), 2);

    fs::write(sub.join("x.jsonl"), "{}\n").unwrap();
    assert!(until(&hits, &rx, &sub.join("x.jsonl")));
    fs::remove_file(sub.join("x.jsonl")).unwrap();
    fs::remove_dir(&sub).unwrap();
    let end = Instant::now() + Duration::from_secs(5);
    while b.table().lock().unwrap().len() != 1 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(b.table().lock().unwrap().len(), 1);
    drop(b);
}
