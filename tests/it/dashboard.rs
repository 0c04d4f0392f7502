//! The dashboard as `levh serve` serves it, over real HTTP on 127.0.0.1: every page path
//! answers with the shell, the files it names are served with their types and a strict
//! content security policy, no page or file needs a token while the API still does, and
//! the Host guard covers the pages too.

use crate::support::serve;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// Status, content type, content security policy and body of a GET.
fn fetch(url: &str, host: Option<&str>) -> (u16, String, String, String) {
    let mut request = agent().get(url);
    if let Some(host) = host {
        request = request.header("Host", host);
    }
    let mut response = request.call().unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (kind, policy) = (header("content-type"), header("content-security-policy"));
    let body = response.body_mut().read_to_string().unwrap_or_default();
    (response.status().as_u16(), kind, policy, body)
}

#[test]
fn every_page_is_the_shell_its_files_are_served_and_only_the_api_needs_the_token() {
    let home = tempfile::tempdir().unwrap();
    let (mut server, address) = serve(home.path(), &[("LEVH_TOKEN", "operator-secret-1234567890")]);
    let base = format!("http://{address}");

    for page in [
        "/",
        "/feed",
        "/search",
        "/memories/019d0b1d-de00-79c8-89b3-af2d00d9814b",
        "/fading",
        "/held",
        "/connectors",
        "/settings",
    ] {
        let (status, kind, policy, body) = fetch(&format!("{base}{page}"), None);
        assert_eq!(status, 200, "{page}");
        assert!(kind.starts_with("text/html"), "{page}: {kind}");
        assert!(policy.contains("default-src 'self'"), "{page}: {policy}");
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{page}: {policy}"
        );
        assert!(
            body.contains("<script type=\"module\" src=\"/assets/app.js\">"),
            "{page}"
        );
    }
    // Every file the shell and the scripts name is served, with its type.
    for (file, wanted) in [
        ("app.js", "text/javascript"),
        ("api.js", "text/javascript"),
        ("pages.js", "text/javascript"),
        ("style.css", "text/css"),
        ("vendor/uplot/uPlot.iife.min.js", "text/javascript"),
        ("vendor/uplot/uPlot.min.css", "text/css"),
    ] {
        let (status, kind, _, body) = fetch(&format!("{base}/assets/{file}"), None);
        assert_eq!(status, 200, "{file}");
        assert!(kind.starts_with(wanted), "{file}: {kind}");
        assert!(!body.is_empty(), "{file}");
    }
    let (status, _, _, body) = fetch(&format!("{base}/assets/../../etc/passwd"), None);
    assert_ne!(status, 200, "{body}");
    let (status, _, _, body) = fetch(&format!("{base}/assets/secret.js"), None);
    assert_eq!(status, 404, "{body}");

    // The pages hold no data: the API behind them still wants the token.
    let (status, _, _, body) = fetch(&format!("{base}/api/stats"), None);
    assert_eq!(status, 401, "{body}");
    // A page asked for under a foreign Host is refused like the API (DNS rebinding).
    let (status, _, _, body) = fetch(&format!("{base}/"), Some("evil.example"));
    assert_eq!(status, 403, "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}
