//! Building the entity index of a store written before it existed: `levh entities
//! reindex --all` at 10k and 100k memories shaped like synced mail (a sender and two or
//! three recipients from 2,000 people at 200 organizations, a quarter of them personal
//! addresses; a known name or an address in the text of one in three), on a real WAL
//! file — beside a baseline measured in the same run: reading the same memories 500 at
//! a time without indexing them (what any full pass costs).
//!
//! `cargo bench -p levh-store --bench entities` (`ENTITY_SIZES=10000` for a quick run)

#[path = "common/record.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use levh_core::{
    Actor, Embedder, FixedClock, Levh, MemoryFilter, Page, Parts, Scope, Store, Timestamp,
    Workspace, text,
};
use levh_embed::HashEmbedder;
use levh_store::SqliteStore;

const FIRST: &[&str] = &[
    "Ada", "Priya", "Tomás", "Ayşe", "Lena", "Grace", "Kemal", "Mei", "Olu", "Sven", "Noor",
    "Ivan", "Zeynep", "Lucía", "Hiro", "Amara", "Jonas", "Fatma", "Raj", "Elif",
];
const LAST: &[&str] = &[
    "Raman",
    "Ortega",
    "Demir",
    "Fischer",
    "Hopper",
    "Yilmaz",
    "Chen",
    "Adeyemi",
    "Berg",
    "Haddad",
    "Petrov",
    "Kaya",
    "García",
    "Sato",
    "Okafor",
    "Weber",
    "Aydın",
    "Shah",
    "Öztürk",
    "Novak",
    "Rossi",
    "Kim",
    "Silva",
    "Nakamura",
    "Dubois",
    "Kowalski",
    "Jensen",
    "Moreau",
    "Ali",
    "Costa",
    "Lindqvist",
    "Murphy",
    "Tanaka",
    "Schmidt",
    "Popescu",
    "Ivanova",
    "Gupta",
    "Larsen",
    "Bianchi",
    "Horvat",
    "Mendes",
    "Quinn",
    "Reyes",
    "Vargas",
    "Wagner",
    "Young",
    "Zhou",
    "Abbasi",
    "Brennan",
    "Castillo",
    "Dalton",
    "Eriksen",
    "Fontaine",
    "Gallo",
    "Hansen",
    "Ibrahim",
    "Jovanović",
    "Keller",
    "Lopez",
    "Moretti",
    "Nilsen",
    "Olsen",
    "Park",
    "Quintero",
    "Russo",
    "Santos",
    "Toth",
    "Ueda",
    "Varga",
    "Walsh",
    "Xu",
    "Yamada",
    "Zanetti",
    "Amari",
    "Bose",
    "Cruz",
    "Diaz",
    "Engel",
    "Farah",
    "Gomez",
    "Hale",
    "Ito",
    "Jung",
    "Khan",
    "Lund",
    "Mori",
    "Nasser",
    "Ortiz",
    "Pinto",
    "Qureshi",
    "Ruiz",
    "Sousa",
    "Tran",
    "Uddin",
    "Vidal",
    "Wolf",
    "Yadav",
    "Zorn",
    "Arslan",
    "Bauer",
];

struct Person {
    name: String,
    email: String,
}

/// 2,000 people (20 first × 100 last names): three in four at one of 200 organizations,
/// the rest on personal providers.
fn people() -> Vec<Person> {
    let mut people = Vec::new();
    for (i, last) in LAST.iter().enumerate() {
        for (j, first) in FIRST.iter().enumerate() {
            let n = i * FIRST.len() + j;
            let local = format!("{}.{}{n}", first.to_lowercase(), last.to_lowercase());
            let domain = if n % 4 == 3 {
                ["gmail.com", "outlook.com", "proton.me"][n % 3].to_owned()
            } else {
                format!("org{}.example-{}.com", n % 200, n % 7)
            };
            people.push(Person {
                name: format!("{first} {last}"),
                email: format!("{local}@{domain}"),
            });
        }
    }
    people
}

fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn fill(store: &SqliteStore, people: &[Person], from: u64, to: u64) {
    let embedder = HashEmbedder::default();
    let actor = Actor::cli();
    let words = [
        "budget", "release", "review", "contract", "schedule", "firmware", "invoice", "roadmap",
        "deadline", "meeting", "slides", "report", "testing", "vendor", "launch", "draft",
    ];
    for n in from..to {
        let mut x = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            | 1;
        let pick = |x: &mut u64| &people[(next(x) % people.len() as u64) as usize];
        let sender = pick(&mut x);
        let recipients: Vec<&Person> = (0..2 + next(&mut x) % 2).map(|_| pick(&mut x)).collect();
        let mut content: String = (0..14)
            .map(|_| words[(next(&mut x) % words.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join(" ");
        content = format!("Mail {n}: {content}.");
        match n % 3 {
            0 => content.push_str(&format!(" Ask {} about it.", pick(&mut x).name)),
            1 => content.push_str(&format!(" Copy {} too.", pick(&mut x).email)),
            _ => {}
        }
        let at = Timestamp::from_second(1_700_000_000 + n as i64 * 60).expect("time");
        let vector = embedder.embed(&[&content]).expect("hash").remove(0);
        let keys = text::near_duplicate_keys(&content);
        let mut record = common::record(content, at, n, embedder.model_id(), vector, keys);
        let mut list =
            vec![serde_json::json!({"name": sender.name, "email": sender.email, "role": "sender"})];
        list.extend(
            recipients.iter().map(
                |p| serde_json::json!({"name": p.name, "email": p.email, "role": "recipient"}),
            ),
        );
        record.memory.metadata = serde_json::json!({
            "connector": "email",
            "source_id": format!("message-{n}"),
            "title": format!("Mail {n}"),
            "people": list,
        });
        record.memory.kind = levh_core::Kind::new("email").expect("kind");
        store
            .insert(&record, &[], &|_| None, &actor)
            .expect("insert");
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SqliteStore::open(&dir.path().join("levh.db")).expect("open store"));
    let levh = Levh::new(Parts {
        store: store.clone(),
        index: store.clone(),
        embedder: Arc::new(HashEmbedder::default()),
        clock: Arc::new(FixedClock("2026-06-01T00:00:00Z".parse().expect("time"))),
        config: Default::default(),
    });
    let scope = Scope::cli(Workspace::default());
    let people = people();
    let sizes: Vec<u64> = std::env::var("ENTITY_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("ENTITY_SIZES: numbers"))
        .collect();
    let mut filled = 0;
    for size in sizes {
        fill(&store, &people, filled, size);
        filled = size;
        let label = format!("{}k", size / 1000);
        let mut group = c.benchmark_group("entities");
        group.sample_size(10);
        group.throughput(Throughput::Elements(size));
        group.measurement_time(Duration::from_secs(5));
        group.bench_function(
            BenchmarkId::new("baseline-read-every-memory", &label),
            |b| {
                b.iter_custom(|iterations| {
                    let started = Instant::now();
                    for _ in 0..iterations {
                        // Keyset pages (each memory has its own minute), as a reindex reads.
                        let mut before = None;
                        loop {
                            let filter = MemoryFilter {
                                created_before: before,
                                ..MemoryFilter::default()
                            };
                            let page = levh
                                .list(
                                    &scope,
                                    filter,
                                    Page {
                                        limit: 500,
                                        offset: 0,
                                    },
                                )
                                .expect("list");
                            before = page.last().map(|m| m.state.created_at);
                            if page.len() < 500 {
                                break;
                            }
                        }
                    }
                    started.elapsed()
                })
            },
        );
        group.bench_function(BenchmarkId::new("reindex-all", &label), |b| {
            b.iter_custom(|iterations| {
                let started = Instant::now();
                for _ in 0..iterations {
                    let report = levh
                        .reindex_entities(
                            &scope,
                            true,
                            levh_core::REINDEX_BATCH,
                            None,
                            &mut |_, _| {},
                        )
                        .expect("reindex");
                    assert_eq!(report.indexed, size);
                }
                started.elapsed()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
