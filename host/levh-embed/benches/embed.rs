//! Embedding throughput of the local model: one text per call and batches of 32, with a
//! Python onnxruntime baseline on the same model files, texts and protocol measured in the
//! same run (the ratio is printed at the end).
//!
//! `eval "$(scripts/fetch-test-assets.sh)"; cargo bench -p levh-embed --bench embed`
//! The baseline needs a Python with onnxruntime, tokenizers and numpy:
//! `LEVH_BENCH_PYTHON=/path/to/venv/bin/python` (skipped, with a note, without one).

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use levh_embed::{Embedder, LocalEmbedder, LocalModel};

/// About 50 tokens each, like a typical note; no two alike.
fn texts() -> Vec<String> {
    const SUBJECTS: [&str; 8] = [
        "The deploy pipeline",
        "Our staging database",
        "The quarterly planning meeting",
        "Priya's onboarding checklist",
        "The VPN certificate",
        "The billing service",
        "Tuesday's incident review",
        "The design system migration",
    ];
    const PREDICATES: [&str; 8] = [
        "was moved to Friday afternoons because the release train kept colliding with the on-call handover",
        "needs a new owner now that the platform team has been split into two smaller groups",
        "depends on the upgraded Postgres cluster in Frankfurt, which finishes its migration next week",
        "should mention the security training, the laptop setup and where the architecture notes live",
        "expires in September and nobody remembers which vault path the renewal script reads from",
        "times out when an invoice has more than two hundred lines, so large customers get split invoices",
        "concluded that alerts fired correctly but the runbook pointed at a dashboard that no longer exists",
        "is halfway done: buttons and forms are converted, tables and charts still use the old tokens",
    ];
    (0..64)
        .map(|i| {
            format!(
                "{} {} (note {i}).",
                SUBJECTS[i % 8],
                PREDICATES[(i / 8 + i) % 8]
            )
        })
        .collect()
}

fn assets() -> Option<(PathBuf, PathBuf)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let model = std::env::var_os("LEVH_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/test-assets/all-MiniLM-L6-v2-int8"));
    let runtime = std::env::var_os("ORT_DYLIB_PATH")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/test-assets/onnxruntime/libonnxruntime.so.1.31.1"));
    (model.join("model.onnx").is_file() && runtime.is_file()).then_some((model, runtime))
}

const ROUNDS: usize = 20;

/// The same protocol the Python script runs: ROUNDS×32 single calls, then ROUNDS batches.
fn rust_protocol(embedder: &LocalEmbedder, texts: &[String]) -> (f64, f64) {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    for i in 0..ROUNDS * 32 {
        black_box(embedder.embed(&[refs[i % refs.len()]]).expect("embed"));
    }
    let single = (ROUNDS * 32) as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    for i in 0..ROUNDS {
        let offset = (i * 32) % refs.len();
        black_box(embedder.embed(&refs[offset..offset + 32]).expect("embed"));
    }
    let batch = (ROUNDS * 32) as f64 / started.elapsed().as_secs_f64();
    (single, batch)
}

fn python_protocol(model: &std::path::Path, texts: &[String]) -> Option<(f64, f64, String)> {
    let python = std::env::var("LEVH_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench-embed-python.py");
    let file = std::env::temp_dir().join(format!("levh-bench-texts-{}.json", std::process::id()));
    std::fs::write(&file, serde_json::to_string(texts).ok()?).ok()?;
    let output = Command::new(&python)
        .arg(&script)
        .arg(model)
        .arg(&file)
        .arg(ROUNDS.to_string())
        .output();
    let _ = std::fs::remove_file(&file);
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            eprintln!(
                "python baseline skipped: {python} failed: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            return None;
        }
        Err(e) => {
            eprintln!("python baseline skipped: cannot run {python}: {e}");
            return None;
        }
    };
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    Some((
        value["single_texts_per_s"].as_f64()?,
        value["batch32_texts_per_s"].as_f64()?,
        value["onnxruntime"].as_str().unwrap_or("?").to_owned(),
    ))
}

fn bench(c: &mut Criterion) {
    let Some((model, runtime)) = assets() else {
        eprintln!("skipped: no test model (run scripts/fetch-test-assets.sh)");
        return;
    };
    let embedder = LocalEmbedder::new(LocalModel::locate(&model, &runtime).expect("model"));
    let texts = texts();
    let started = Instant::now();
    embedder.load().expect("the model loads");
    eprintln!("runtime + model load: {:?}", started.elapsed());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();

    let mut group = c.benchmark_group("local_embed");
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function("single", |b| {
        b.iter(|| {
            i = (i + 1) % refs.len();
            embedder.embed(&refs[i..i + 1]).expect("embed")
        })
    });
    group.throughput(Throughput::Elements(32));
    group.bench_function("batch_32", |b| {
        b.iter(|| embedder.embed(&refs[..32]).expect("embed"))
    });
    group.finish();

    let (rust_single, rust_batch) = rust_protocol(&embedder, &texts);
    println!("\nsame protocol ({ROUNDS}×32 texts, ~50 tokens each):");
    println!(
        "  levh (Rust, ort)       single {rust_single:7.1} texts/s   batch 32 {rust_batch:7.1} texts/s"
    );
    if let Some((py_single, py_batch, version)) = python_protocol(&model, &texts) {
        println!(
            "  Python onnxruntime {version} single {py_single:7.1} texts/s   batch 32 {py_batch:7.1} texts/s"
        );
        println!(
            "  ratio Rust/Python      single {:.2}×   batch 32 {:.2}×",
            rust_single / py_single,
            rust_batch / py_batch
        );
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
