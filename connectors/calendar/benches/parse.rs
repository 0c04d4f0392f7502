//! Reading a generated calendar of 1,000 to 10,000 events: the time per 1,000 events
//! should stay flat (it grew with the square of the count when whole files were parsed
//! by the iCalendar crate's combinators). Run: `cargo bench -p levh-connector-calendar`.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use levh_connector_calendar::generate::calendar;
use levh_connector_calendar::parse::{Window, parse};

fn reading(c: &mut Criterion) {
    let now = "2026-03-20T12:00:00Z".parse().unwrap();
    let window = Window::around(now, 30, 30).unwrap();
    let mut group = c.benchmark_group("calendar_parse");
    group.sample_size(10);
    for events in [1_000, 2_000, 5_000, 10_000] {
        let bytes = calendar(events, now);
        group.throughput(Throughput::Elements(events as u64));
        group.bench_with_input(BenchmarkId::from_parameter(events), &bytes, |b, bytes| {
            b.iter(|| parse("generated.ics", bytes, &window).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, reading);
criterion_main!(benches);
