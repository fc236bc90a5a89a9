//! The test server and the command builder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use carapi_sdk::{Client, HistoricoParams};
use carapi_service::{Config, ContaCriada, NovaConta, RunningServer};
use rust_decimal::Decimal;
use tempfile::TempDir;

/// Real CAR codes of the bundled SICAR records.
pub const CODES: [&str; 5] = [
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "DF-5300108-02B2E1AB4D9A42079E1FE1FAC35A2A65",
    "DF-5300108-13EC6FAD7D144E23B0D5D5FDC71EEC18",
    "MT-5107925-13FA6C45281244E48293A21AF17A2AA8",
    "MT-5107925-41510FBA2A0B4C58BC2FC6AC3D720A07",
];

/// A reference server with one account, plus a temporary home for the CLI.
pub struct TestServer {
    pub rt: tokio::runtime::Runtime,
    server: Option<RunningServer>,
    pub base_url: String,
    pub conta: ContaCriada,
    pub dir: TempDir,
}

impl TestServer {
    pub fn new() -> Self {
        Self::with(NovaConta::default())
    }

    pub fn with(spec: NovaConta) -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("servidor.sqlite3");
        let (server, conta) = rt.block_on(async {
            let server = carapi_service::spawn(Config::local(format!("sqlite://{}", db.display())))
                .await
                .unwrap();
            let conta = server.create_conta(spec).await.unwrap();
            (server, conta)
        });
        let base_url = server.base_url();
        std::fs::create_dir_all(dir.path().join("trabalho")).unwrap();
        TestServer {
            rt,
            server: Some(server),
            base_url,
            conta,
            dir,
        }
    }

    /// The working directory of the commands.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.path().join("trabalho")
    }

    /// `carapi` with no key and no base URL: only the temporary config/data dirs.
    pub fn cmd_without_credentials(&self) -> Command {
        let mut c = Command::cargo_bin("carapi").unwrap();
        for v in [
            "CARAPI_API_KEY",
            "CARAPI_BASE_URL",
            "CARAPI_LOCAL",
            "NO_COLOR",
            "RUST_LOG",
        ] {
            c.env_remove(v);
        }
        c.env("CARAPI_CONFIG_DIR", self.dir.path().join("config"))
            .env("CARAPI_DATA_DIR", self.dir.path().join("data"))
            .env("CARAPI_KEYRING", "off")
            .current_dir(self.work_dir())
            .timeout(Duration::from_secs(120));
        c
    }

    /// `carapi` pointed at this server with the account's key.
    pub fn cmd(&self) -> Command {
        let mut c = self.cmd_without_credentials();
        c.env("CARAPI_BASE_URL", &self.base_url)
            .env("CARAPI_API_KEY", &self.conta.api_key);
        c
    }

    /// A std command (for spawning and signals), same environment as [`TestServer::cmd`].
    pub fn process(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("carapi"));
        for v in ["CARAPI_LOCAL", "NO_COLOR", "RUST_LOG"] {
            c.env_remove(v);
        }
        c.env("CARAPI_CONFIG_DIR", self.dir.path().join("config"))
            .env("CARAPI_DATA_DIR", self.dir.path().join("data"))
            .env("CARAPI_KEYRING", "off")
            .env("CARAPI_BASE_URL", &self.base_url)
            .env("CARAPI_API_KEY", &self.conta.api_key)
            .current_dir(self.work_dir());
        c
    }

    pub fn client(&self) -> Client {
        Client::builder()
            .base_url(&self.base_url)
            .api_key(&self.conta.api_key)
            .build()
            .unwrap()
    }

    pub fn saldo(&self) -> Decimal {
        let c = self.client();
        self.rt
            .block_on(async { c.saldo().await.unwrap().saldo_reais })
    }

    /// Charged lookups recorded in the history, per key.
    pub fn charged(&self) -> Vec<String> {
        let c = self.client();
        self.rt.block_on(async {
            let h = c
                .historico(&HistoricoParams {
                    size: Some(100),
                    ..Default::default()
                })
                .await
                .unwrap();
            h.itens
                .into_iter()
                .filter(|i| i.cobrado)
                .filter_map(|i| i.chave_consulta)
                .collect()
        })
    }

    pub fn pay(&self, id: uuid::Uuid) {
        let s = self.server.as_ref().unwrap();
        self.rt.block_on(async { s.pay_recarga(id).await.unwrap() });
    }

    pub fn recargas(&self) -> u64 {
        let c = self.client();
        self.rt
            .block_on(async { c.recargas(&Default::default()).await.unwrap().total })
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(s) = self.server.take() {
            self.rt.block_on(s.shutdown());
        }
    }
}

pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn write_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

pub fn dec(s: &str) -> Decimal {
    s.parse().unwrap()
}

/// Asserts the exit code and the `erro: ... (CODE)` line with a hint.
#[track_caller]
pub fn assert_error(o: &std::process::Output, exit_status: i32, code: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(exit_status),
        "stderr: {err}\nstdout: {}",
        stdout(o)
    );
    assert!(
        err.contains(&format!("({code})")),
        "expected ({code}) in: {err}"
    );
    assert!(err.lines().any(|l| l.starts_with("erro: ")), "{err}");
    assert!(!err.contains('\x1b'), "colour in piped stderr: {err:?}");
}

/// A Python that has openpyxl (to read a `.xlsx` back as Excel users' tools do): `python3` when
/// it has it, else a virtual environment under the test target's temporary directory, made with
/// `pip install openpyxl` the first time. `None` when neither works (no Python, no network):
/// the caller skips, saying so.
pub fn openpyxl_python() -> Option<PathBuf> {
    static PYTHON: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let has = |python: &Path| {
                std::process::Command::new(python)
                    .args(["-c", "import openpyxl"])
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            if has(Path::new("python3")) {
                return Some(PathBuf::from("python3"));
            }
            let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("openpyxl-venv");
            let python = venv.join("bin").join("python");
            if has(&python) {
                return Some(python);
            }
            let made = std::process::Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success())
                && std::process::Command::new(&python)
                    .args(["-m", "pip", "install", "-q", "openpyxl"])
                    .status()
                    .is_ok_and(|s| s.success());
            (made && has(&python)).then_some(python)
        })
        .clone()
}

/// The workbook at `path` as openpyxl reads it: per sheet, its `freeze_panes`, its
/// `auto_filter.ref`, and its rows of cell values (dates as ISO text), with each cell's number
/// format; `None` (the test then skips) without a Python that has openpyxl.
pub fn openpyxl_read(path: &Path) -> Option<serde_json::Value> {
    const SCRIPT: &str = r#"
import json, sys, datetime, openpyxl
wb = openpyxl.load_workbook(sys.argv[1])
out = {}
for ws in wb.worksheets:
    rows = []
    for row in ws.iter_rows():
        cells = []
        for c in row:
            v = c.value
            if isinstance(v, (datetime.datetime, datetime.date)):
                v = v.isoformat()
            cells.append({"v": v, "fmt": c.number_format})
        rows.append(cells)
    out[ws.title] = {"freeze": ws.freeze_panes, "filter": ws.auto_filter.ref, "rows": rows}
print(json.dumps(out))
"#;
    let Some(python) = openpyxl_python() else {
        eprintln!("SKIPPED: no Python with openpyxl (pip install openpyxl) to read {path:?}");
        return None;
    };
    let o = std::process::Command::new(python)
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice(&o.stdout).unwrap())
}
