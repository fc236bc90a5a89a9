//! `carapi-server serve --modo-teste` in a process of its own, over a temporary SQLite file:
//! accounts created and read through its `/_teste` routes, lookups through the SDK over a real
//! socket.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use carapi_tests::server_bin;
use rust_decimal::Decimal;

/// The `/_teste` token (at least 32 characters).
const TOKEN: &str = "teste_e2e_0123456789abcdef0123456789abcdef";

/// A running `carapi-server serve --modo-teste`; killed on drop.
pub struct Process {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    http: reqwest::Client,
    _dir: tempfile::TempDir,
}

/// An account of the process: its id and key.
pub struct ContaProcess {
    pub id: i64,
    pub api_key: String,
}

impl Process {
    /// Starts the server (bundled data, per-key limiter on as in production) and waits until
    /// it listens.
    pub fn start() -> Self {
        let dir = tempfile::tempdir().expect("temporary folder");
        let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
        let mut child = Command::new(server_bin())
            .args(["serve", "--bind", "127.0.0.1:0", "--database", &url])
            .args(["--modo-teste", "--token-teste", TOKEN])
            .env_remove("CARAPI_DATABASE_URL")
            .env("CARAPI_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("carapi-server serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let base_url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.split("carapi-server ouvindo em ")
                    .nth(1)
                    .map(|u| u.trim().to_owned())
            })
            .expect("the server says where it listens");
        std::thread::spawn(move || lines.for_each(drop));
        Process {
            child,
            base_url,
            http: reqwest::Client::new(),
            _dir: dir,
        }
    }

    /// A new account with `saldo` BRL.
    pub async fn conta(&self, saldo: Decimal) -> ContaProcess {
        let v: serde_json::Value = self
            .http
            .post(format!("{}/_teste/contas", self.base_url))
            .bearer_auth(TOKEN)
            .json(&serde_json::json!({ "saldo": saldo.to_string().parse::<f64>().unwrap() }))
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .await
            .unwrap();
        ContaProcess {
            id: v["contaId"].as_i64().expect("contaId"),
            api_key: v["apiKey"].as_str().expect("apiKey").to_owned(),
        }
    }

    /// What the server debited `conta` so far, BRL (the ledger's debits).
    pub async fn debited(&self, conta: &ContaProcess) -> Decimal {
        let v: serde_json::Value = self
            .http
            .get(format!("{}/_teste/contas/{}", self.base_url, conta.id))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap()
            .error_for_status()
            .unwrap()
            .json()
            .await
            .unwrap();
        let n = v["debitado"].as_f64().expect("debitado is a JSON number");
        Decimal::try_from(n).unwrap().round_dp(2)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
