//! Many processes on one file: several agents each spawn their own `levh`.

use std::collections::HashSet;

use crate::support::{distinct_sentence, levh};

#[test]
fn eight_processes_capturing_two_hundred_memories_each_lose_nothing() {
    let home = tempfile::tempdir().unwrap();
    let (workers, per_worker) = (8, 200);
    let threads: Vec<_> = (0..workers)
        .map(|worker| {
            let home = home.path().to_path_buf();
            std::thread::spawn(move || {
                for i in 0..per_worker {
                    let text = distinct_sentence((worker * 1000 + i) as u64);
                    let out = crate::support::json(levh(&home).args(["capture", &text, "--json"]));
                    assert_eq!(out["verdict"], "admit", "{text}: {out}");
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }

    let listed =
        crate::support::json(levh(home.path()).args(["list", "--limit", "5000", "--json"]));
    let contents: HashSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(contents.len(), workers * per_worker);
    let doctor = crate::support::json(levh(home.path()).args(["doctor", "--json"]));
    assert_eq!(doctor["health"]["memories"], 1600);
    assert_eq!(doctor["ok"], true);
}
