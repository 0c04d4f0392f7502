//! A hostile connector: `mode` in its config picks the misbehaviour. The sandbox tests
//! check that each is refused or stopped and that the host stays up.

#[cfg(target_arch = "wasm32")]
mod component {
    use levh_connector_sdk::{Capability, Config, Error, Guest, Item, Manifest, Page};

    struct Hostile;

    fn item(id: &str, content: String) -> Item {
        Item {
            source_id: id.into(),
            title: id.into(),
            content,
            kind: "note".into(),
            occurred_at: None,
            people: Vec::new(),
            source_uri: None,
            metadata: "{}".into(),
        }
    }

    fn page(items: Vec<Item>) -> Page {
        Page {
            items,
            errors: Vec::new(),
            next_cursor: None,
            done: true,
        }
    }

    impl Guest for Hostile {
        fn manifest() -> Manifest {
            Manifest {
                id: "hostile".into(),
                version: "6.6.6".into(),
                description: "misbehaves on purpose".into(),
                api_version: levh_connector_sdk::API_VERSION.into(),
                config: Vec::new(),
                capabilities: vec![Capability::ReadPath("directory".into())],
            }
        }

        fn sync(config: Config, _cursor: Option<String>) -> Result<Page, Error> {
            let mode = levh_connector_sdk::config_value(&config, "mode").unwrap_or("ok");
            let directory = levh_connector_sdk::config_value(&config, "directory")
                .unwrap_or("/grant/directory");
            match mode {
                "ok" => {
                    levh_connector_sdk::info("hostile guest says hello");
                    Ok(page(vec![item("ok", "an honest item".into())]))
                }
                "read-granted" => {
                    let text = std::fs::read_to_string(format!("{directory}/inside.txt"))
                        .map_err(|e| Error::Failed(format!("read inside: {e}")))?;
                    Ok(page(vec![item("inside", text)]))
                }
                "read-outside" => {
                    // Every way out of the grant: absolute, `..`, a planted symlink.
                    let mut found = Vec::new();
                    for path in [
                        "/etc/passwd".to_owned(),
                        format!("{directory}/../outside.txt"),
                        format!("{directory}/link-out/outside.txt"),
                    ] {
                        if let Ok(text) = std::fs::read_to_string(&path) {
                            found.push(item(&path, text));
                        }
                    }
                    if found.is_empty() {
                        Err(Error::Denied("every read outside the grant failed".into()))
                    } else {
                        Ok(page(found))
                    }
                }
                "read-outside-sdk" => {
                    // The SDK's reader: each way out is the typed `denied`, naming the path.
                    let mut refused = Vec::new();
                    for path in [
                        "/etc/passwd".to_owned(),
                        format!("{directory}/../outside.txt"),
                        format!("{directory}/link-out/outside.txt"),
                    ] {
                        match levh_connector_sdk::read_file(&path) {
                            Ok(_) => return Ok(page(vec![item(&path, "read".into())])),
                            Err(Error::Denied(why)) => refused.push(why),
                            Err(other) => {
                                return Err(Error::Failed(format!("{path}: not typed: {other:?}")));
                            }
                        }
                    }
                    // A file missing inside the grant is not a denial.
                    let missing = format!("{directory}/missing.txt");
                    if !matches!(
                        levh_connector_sdk::read_file(&missing),
                        Err(Error::Failed(_))
                    ) {
                        return Err(Error::Failed(format!("{missing}: not `failed`")));
                    }
                    Err(Error::Denied(refused.join(" | ")))
                }
                "write" => {
                    std::fs::write(format!("{directory}/planted.txt"), "x")
                        .map_err(|e| Error::Denied(format!("write refused: {e}")))?;
                    Ok(page(Vec::new()))
                }
                "socket" => match std::net::TcpStream::connect("127.0.0.1:9") {
                    Ok(_) => Ok(page(vec![item("socket", "connected".into())])),
                    Err(e) => Err(Error::Denied(format!("socket refused: {e}"))),
                },
                "env" => Ok(page(vec![item(
                    "env",
                    format!(
                        "{:?} {:?}",
                        std::env::vars().collect::<Vec<_>>(),
                        std::env::args().collect::<Vec<_>>()
                    ),
                )])),
                "loop" => {
                    let mut x: u64 = 0;
                    loop {
                        x = x.wrapping_mul(31).wrapping_add(7);
                        std::hint::black_box(x);
                    }
                }
                "alloc" => {
                    let mut hoard: Vec<Vec<u8>> = Vec::new();
                    loop {
                        hoard.push(vec![1u8; 1 << 20]);
                        std::hint::black_box(&hoard);
                    }
                }
                "giant" => Ok(page(
                    (0..48)
                        .map(|i| item(&format!("giant-{i}"), "g".repeat(1 << 20)))
                        .collect(),
                )),
                "panic" => panic!("the hostile guest panics on purpose"),
                // Built with `--features http`, the guest imports wasi:http though its
                // manifest asks for no host: levh must refuse it at install.
                #[cfg(feature = "http")]
                "fetch" => levh_connector_sdk::http::get("https://example.com/", &[])
                    .map(|r| page(vec![item("fetched", r.text())]))
                    .map_err(|e| Error::Failed(format!("{e:?}"))),
                other => Err(Error::InvalidConfig(format!("unknown mode {other}"))),
            }
        }
    }

    levh_connector_sdk::export_connector!(Hostile);
}
