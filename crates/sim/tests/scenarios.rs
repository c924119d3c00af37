use qoslab_sim::scenario::load::load_file;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn scratch() {
    for dir in ["scenarios/examples", "tests/scenarios/good"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "toml") {
                match load_file(&p, &[]) {
                    Ok(s) => println!("{}: ok {}", p.display(), s.name),
                    Err(e) => println!("{e}"),
                }
            }
        }
    }
}
