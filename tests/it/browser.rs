//! A real headless Chromium for the dashboard tests: Debian's `chromium` driven over
//! WebDriver by its `chromedriver` (both installed by `.ci/run`), through `fantoccini`.
//!
//! Each [`Browser`] starts its own chromedriver on a free loopback port and one Chromium
//! with an empty profile and no background networking (this machine's network is closed,
//! and Chromium would otherwise keep trying Google's hosts). The browser's console is read
//! back through chromedriver's log endpoint, so a test can say "no console error" and mean
//! every error the page or the network caused, not only the ones a script caught.
//!
//! Without chromedriver the tests say why on stderr and pass — unless
//! `LEVH_REQUIRE_TEST_ASSETS` is set (as `.ci/run` does), when they fail.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder, Locator};
use levh_mcp::tokio;
use serde_json::{Value, json};

/// chromedriver and chromium, if installed (`LEVH_CHROMEDRIVER`, `LEVH_CHROMIUM` name
/// others).
fn installed() -> Option<(PathBuf, PathBuf)> {
    let driver = std::env::var_os("LEVH_CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromedriver".into());
    let chromium = std::env::var_os("LEVH_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromium".into());
    if driver.is_file() && chromium.is_file() {
        return Some((driver, chromium));
    }
    crate::support::skip(&format!(
        "dashboard browser tests: no {} or {} (install Debian's chromium and chromium-driver \
         packages, as .ci/run does, or set LEVH_CHROMEDRIVER and LEVH_CHROMIUM)",
        driver.display(),
        chromium.display()
    ));
    None
}

/// One Chromium behind its own chromedriver.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

/// chromedriver's `POST /session/{id}/se/log`: the console entries since the last call.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// chromedriver's `POST /session/{id}/goog/cdp/execute`: one DevTools command, for what
/// WebDriver has no command for (emulating the dark colour scheme).
#[derive(Debug)]
struct DevTools(Value);

impl WebDriverCompatibleCommand for DevTools {
    fn endpoint(
        &self,
        base: &url::Url,
        session: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base.join(&format!(
            "session/{}/goog/cdp/execute",
            session.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.0.to_string()))
    }
}

impl Browser {
    /// A browser with a window of `width` × 900, or `None` when none is installed.
    pub async fn start(width: u32) -> Option<Self> {
        let (driver_path, chromium) = installed()?;
        let mut driver = Command::new(&driver_path)
            .args(["--port=0", "--allowed-ips=127.0.0.1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", driver_path.display()));
        // "ChromeDriver was started successfully on port 46201."
        let mut port = None;
        for line in std::io::BufReader::new(driver.stdout.take().unwrap()).lines() {
            let line = line.unwrap();
            if let Some(rest) = line.split("successfully on port ").nth(1) {
                port = Some(rest.trim_end_matches('.').trim().to_owned());
                break;
            }
        }
        let port = port.expect("chromedriver printed no port");
        let profile = tempfile::tempdir().unwrap();
        let mut capabilities = Capabilities::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-background-networking", "--disable-component-update",
                    "--disable-sync", "--disable-quic", "--no-first-run",
                    "--disable-features=Translate,OptimizationHints,MediaRouter",
                    format!("--user-data-dir={}", profile.path().display()),
                    format!("--window-size={width},900"),
                ],
            }),
        );
        capabilities.insert("goog:loggingPrefs".into(), json!({ "browser": "ALL" }));
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromedriver session");
        Some(Self {
            client,
            driver,
            _profile: profile,
        })
    }

    /// Console entries logged since the last call: (level, message).
    pub async fn console(&self) -> Vec<(String, String)> {
        let entries = self.client.issue_cmd(BrowserLog).await.unwrap();
        entries
            .as_array()
            .into_iter()
            .flatten()
            .map(|entry| {
                (
                    entry["level"].as_str().unwrap_or_default().to_owned(),
                    entry["message"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    /// Console errors (network failures included) logged since the last call.
    pub async fn console_errors(&self) -> Vec<String> {
        self.console()
            .await
            .into_iter()
            .filter(|(level, _)| level == "SEVERE")
            .map(|(_, message)| message)
            .collect()
    }

    /// Fails the test if anything was logged at error level since the last call.
    pub async fn assert_no_console_error(&self, page: &str) {
        let errors = self.console_errors().await;
        assert!(errors.is_empty(), "{page}: console errors {errors:#?}");
    }

    /// Runs `script` (a function body) until it returns something truthy, for up to ten
    /// seconds; its value.
    pub async fn until(&self, what: &str, script: &str) -> Value {
        self.until_within(what, script, Duration::from_secs(10))
            .await
    }

    /// [`Browser::until`] with a longer wait, for what takes longer on a cold machine (the
    /// first sync compiles its connector component).
    pub async fn until_within(&self, what: &str, script: &str, wait: Duration) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let value = self.client.execute(script, vec![]).await.unwrap();
            let truthy = match &value {
                Value::Null | Value::Bool(false) => false,
                Value::String(s) => !s.is_empty(),
                Value::Number(n) => n.as_f64() != Some(0.0),
                _ => true,
            };
            if truthy {
                return value;
            }
            if Instant::now() > deadline {
                let text = self.text("main").await;
                panic!("waited {wait:?} for {what}; the page says:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The visible text of the first element `css` matches ("" when none does).
    pub async fn text(&self, css: &str) -> String {
        match self.client.find(Locator::Css(css)).await {
            Ok(element) => element.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Clicks the first button in `main` whose label is `label`.
    pub async fn click_button(&self, label: &str) {
        let buttons = self
            .client
            .find_all(Locator::Css("main button"))
            .await
            .unwrap();
        for button in buttons {
            if button.text().await.unwrap_or_default().trim() == label {
                button.click().await.unwrap();
                return;
            }
        }
        panic!(
            "no button {label:?} on the page:\n{}",
            self.text("main").await
        );
    }

    /// Presses and releases `key` wherever the focus is, as a person at the keyboard does.
    pub async fn press(&self, key: fantoccini::key::Key) {
        self.type_char(char::from(key)).await;
    }

    /// Presses and releases one character's key, as a person typing it.
    pub async fn type_char(&self, value: char) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let keys = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value })
            .then(KeyAction::Up { value });
        self.client.perform_actions(keys).await.unwrap();
    }

    /// What the focused element is, as `TAG` or `TAG "its text"` (for a keyboard walk).
    pub async fn focused(&self) -> String {
        let value = self
            .client
            .execute(
                "const e = document.activeElement; const t = (e.textContent || '').trim(); \
                 return e.tagName + (t && e.tagName !== 'MAIN' && e.tagName !== 'BODY' ? ` \"${t}\"` : '')",
                vec![],
            )
            .await
            .unwrap();
        value.as_str().unwrap_or_default().to_owned()
    }

    /// Makes the page see `prefers-color-scheme: dark` (or light again).
    pub async fn prefer_dark(&self, dark: bool) {
        let scheme = if dark { "dark" } else { "light" };
        self.client
            .issue_cmd(DevTools(json!({
                "cmd": "Emulation.setEmulatedMedia",
                "params": { "features": [{ "name": "prefers-color-scheme", "value": scheme }] },
            })))
            .await
            .unwrap();
    }

    /// The page's accessibility violations by axe-core (WCAG 2 A and AA, and best
    /// practice), each as `rule: help — the first element`; `None` (said on stderr, or a
    /// failure under `LEVH_REQUIRE_TEST_ASSETS`) when axe-core is not installed where
    /// `.ci/run` puts it (`.cache/axe`, from the npm registry).
    pub async fn axe_violations(&self) -> Option<Vec<String>> {
        let script =
            crate::support::repository_root().join(".cache/axe/node_modules/axe-core/axe.min.js");
        let Ok(axe) = std::fs::read_to_string(&script) else {
            crate::support::skip(&format!(
                "accessibility checks: no {} (`npm install --prefix .cache/axe axe-core@4.14.1`, as .ci/run does)",
                script.display()
            ));
            return None;
        };
        // Loaded into the page by WebDriver (the page's content security policy allows
        // no script but its own, and WebDriver's is not the page's).
        if self
            .client
            .execute("return typeof window.axe", vec![])
            .await
            .unwrap()
            != "object"
        {
            self.client.execute(&axe, vec![]).await.unwrap();
        }
        let found = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, { resultTypes: ['violations'] }).then(r => done(r.violations.map(v =>
                   `${v.id}: ${v.help} — ${v.nodes.length} × e.g. ${v.nodes[0].target.join(' ')}: ${v.nodes[0].failureSummary}`)));",
                vec![],
            )
            .await
            .unwrap();
        Some(serde_json::from_value(found).unwrap())
    }

    /// A PNG of the window, written to `dir/name.png`.
    pub async fn screenshot(&self, dir: &Path, name: &str) {
        std::fs::create_dir_all(dir).unwrap();
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    pub async fn close(mut self) {
        self.client.close().await.unwrap();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
