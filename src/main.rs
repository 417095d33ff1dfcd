//! The `spool` binary: parse the command line and hand off to the library.

fn main() {
    println!("spool");
}
