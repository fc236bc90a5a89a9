//! What every command receives: the output, the global options, the directories, and a way to
//! get an SDK client (remote, or the in-process local server).

use carapi_sdk::archive::{Archive, ArchivePolicy};
use carapi_sdk::{Client, ClientBuilder};

use crate::config::{ConfigFile, Paths, parse_base_url};
use crate::credentials::{self, Credential};
use crate::error::{CliError, Kind, Result};
#[cfg(feature = "local")]
use crate::local::Local;
use crate::options::{ArchiveArgs, FormatArgs, Global};
use crate::output::{OutputFormat, Shell};

/// The context of one invocation.
#[derive(Debug)]
pub(crate) struct Context {
    /// All output.
    pub(crate) shell: Shell,
    /// Global options.
    pub(crate) global: Global,
    /// `-o` given before the subcommand.
    root_format: Option<OutputFormat>,
    /// The CLI's directories.
    pub(crate) paths: Paths,
    #[cfg(feature = "local")]
    local: Option<Local>,
    /// The base URL of the last client built (named in errors about the server).
    used_base_url: Option<String>,
    /// The server and key of the last client built (whose prices [`crate::prices`] keeps).
    used_conta: Option<(String, String)>,
    /// The exit status of a command that succeeded with something to say to a script:
    /// `carapi vigiar`'s [`crate::error::EXIT_CHANGED`] or [`crate::error::EXIT_CEILING`];
    /// `None` exits 0.
    pub(crate) success_exit: Option<u8>,
}

/// Where requests go and with which key.
#[derive(Debug, Clone)]
pub(crate) struct Destination {
    /// Base URL.
    pub(crate) base_url: String,
    /// The key.
    credential: Credential,
}

impl Context {
    /// A context.
    pub(crate) fn new(
        shell: Shell,
        global: Global,
        root_format: Option<OutputFormat>,
        paths: Paths,
    ) -> Self {
        Context {
            shell,
            global,
            root_format,
            paths,
            #[cfg(feature = "local")]
            local: None,
            used_base_url: None,
            used_conta: None,
            success_exit: None,
        }
    }

    /// Sends the rest of stdout through the pager, for a long list shown as a table on a
    /// terminal (see [`Shell::start_pager`]); not with `--sem-paginador`.
    pub(crate) fn use_pager(&mut self, format: OutputFormat) {
        if format == OutputFormat::Table && !self.global.no_pager {
            self.shell.start_pager();
        }
    }

    /// The effective format: after the subcommand, else before it, else table.
    pub(crate) fn format(&self, args: FormatArgs) -> OutputFormat {
        args.output.or(self.root_format).unwrap_or_default()
    }

    /// The base URL without a key: `--url-base`/`CARAPI_BASE_URL`, else `config.toml`.
    ///
    /// # Errors
    /// Usage error when none is configured or it is invalid.
    pub(crate) fn base_url(&self) -> Result<(String, &'static str)> {
        if let Some(u) = &self.global.base_url {
            let source = if std::env::var("CARAPI_BASE_URL").ok().as_deref() == Some(u.as_str()) {
                "CARAPI_BASE_URL"
            } else {
                "--url-base"
            };
            return Ok((parse_base_url(u)?, source));
        }
        match ConfigFile::load(&self.paths)?.base_url {
            Some(u) => Ok((parse_base_url(&u)?, "config.toml")),
            None => Err(CliError::new(Kind::Usage, "SEM_URL", "URL base da API não configurada").hint(
                "carapi config definir base-url URL, --url-base URL ou CARAPI_BASE_URL; para testar sem servidor: --local",
            )),
        }
    }

    /// Where requests go: starts the local server in `--local` mode.
    ///
    /// # Errors
    /// No base URL, no key (exit 3), or the local server failing to start.
    pub(crate) async fn destination(&mut self) -> Result<Destination> {
        if self.global.local {
            return self.local_destination().await;
        }
        let (base_url, _) = self.base_url()?;
        let credential = credentials::resolve(&self.paths)?.ok_or_else(|| {
            CliError::new(
                Kind::Auth,
                "CHAVE_AUSENTE",
                "nenhuma chave da API configurada",
            )
            .hint("carapi login, ou defina CARAPI_API_KEY; para testar sem conta: --local")
        })?;
        Ok(Destination {
            base_url,
            credential,
        })
    }

    #[cfg(feature = "local")]
    async fn local_destination(&mut self) -> Result<Destination> {
        let local = self.local().await?;
        Ok(Destination {
            base_url: local.base_url(),
            credential: Credential {
                key: local.api_key().to_owned(),
                source: credentials::KeySource::Local(local.key_file()),
            },
        })
    }

    #[cfg(not(feature = "local"))]
    async fn local_destination(&mut self) -> Result<Destination> {
        Err(no_local_mode())
    }

    /// The in-process local server, started on first use.
    #[cfg(feature = "local")]
    ///
    /// # Errors
    /// When the store cannot be opened or the server cannot bind.
    pub(crate) async fn local(&mut self) -> Result<&Local> {
        if self.local.is_none() {
            let l = Local::start(&self.paths, None).await?;
            if l.created_conta {
                self.shell.note(format!(
                    "Modo local: conta criada com {} de crédito de demonstração (dados em {}).",
                    carapi_sdk::domain::brl::format(crate::local::DEMO_CREDIT),
                    self.paths.local_dir().display()
                ));
            }
            self.local = Some(l);
        }
        Ok(self.local.as_ref().expect("just set"))
    }

    /// A client builder for the destination (base URL, key, user agent).
    ///
    /// # Errors
    /// Those of [`Context::destination`].
    pub(crate) async fn builder(&mut self) -> Result<ClientBuilder> {
        let d = self.destination().await?;
        self.used_base_url = Some(d.base_url.clone());
        let known = crate::prices::known(&self.paths, &d.base_url, &d.credential.key);
        self.used_conta = Some((d.base_url.clone(), d.credential.key.clone()));
        let mut builder = Client::builder()
            .base_url(&d.base_url)
            .api_key(d.credential.key)
            .user_agent(concat!("carapi-cli/", env!("CARGO_PKG_VERSION")));
        if let Some(p) = known {
            // The current table, read today: no `GET /v1/saldo` beside the first lookup.
            builder = builder.precos(p);
        }
        Ok(match crate::test_hook::poll_interval() {
            Some(i) => builder.poll_interval_unchecked(i),
            None => builder,
        })
    }

    /// The client of a charged lookup: with the archive of paid answers when one is configured
    /// (`carapi config definir acervo`), its purpose and legal basis checked before any request.
    ///
    /// # Errors
    /// Those of [`Context::client`]; a missing purpose or legal basis (exit 2); an archive that
    /// cannot be opened.
    pub(crate) async fn consulta_client(&mut self, args: &ArchiveArgs) -> Result<Client> {
        let client = self.consulta_builder(args).await?.0.build()?;
        // `--comprar` is the explicit decision to buy again: also the owner lookup of a
        // document purged at its owner's request.
        Ok(if args.buy && client.archive().is_some() {
            client.with_purged_allowed()
        } else {
            client
        })
    }

    /// [`Context::builder`] with the archive when one is configured (see
    /// [`Context::consulta_client`]), and the archive with its policy.
    ///
    /// # Errors
    /// As [`Context::consulta_client`].
    pub(crate) async fn consulta_builder(
        &mut self,
        args: &ArchiveArgs,
    ) -> Result<(ClientBuilder, Option<(Archive, ArchivePolicy)>)> {
        let cfg = ConfigFile::load(&self.paths)?;
        let Some(path) = crate::archive::configured(&cfg, &self.paths) else {
            return Ok((self.builder().await?, None));
        };
        // Checked before anything is sent.
        let policy = crate::archive::policy(&cfg, args)?;
        let archive = crate::archive::open(&path)?;
        let builder = self
            .builder()
            .await?
            .archive(archive.clone(), policy.clone());
        Ok((builder, Some((archive, policy))))
    }

    /// A client with the defaults.
    ///
    /// # Errors
    /// Those of [`Context::destination`] and of building the client.
    pub(crate) async fn client(&mut self) -> Result<Client> {
        Ok(self.builder().await?.build()?)
    }

    /// After a charged lookup, on a terminal: `cobrado R$ 1,00` on stderr, the amount the SDK
    /// counted as charged by `client` ([`Client::gasto`], priced at the account's prices, which
    /// [`Client::precos`] learns by a free `GET /v1/saldo` when the client does not know them
    /// yet). Nothing for a sandbox answer, with `--silencioso`, or when stderr is not a terminal.
    pub(crate) async fn show_charge(&mut self, client: &Client, sandbox: bool) {
        if sandbox {
            return;
        }
        let g = client.gasto();
        if g.nao_precificadas == 0 && !g.confirmado.is_zero() {
            // Priced: the client knows the prices (read beside the lookup, or kept).
            if let Ok(p) = client.precos().await {
                self.remember_prices(&p);
            }
        }
        if !self.shell.err_is_tty() || self.shell.is_quiet() {
            return;
        }
        let _ = client.precos().await;
        let g = client.gasto();
        if g.nao_precificadas == 0 && !g.confirmado.is_zero() {
            self.shell.status(format!(
                "cobrado {}",
                carapi_sdk::domain::brl::format(g.confirmado)
            ));
        } else {
            self.shell
                .status("consulta cobrada (os preços da conta: carapi saldo)");
        }
    }

    /// After a lookup through the archive: where the answer came from (an answer read from the
    /// archive costs nothing: a note instead of the charge), and the warning of a bought answer
    /// that could not be archived. Without the archive (`origin` `None`), [`Context::show_charge`].
    pub(crate) async fn show_origin(
        &mut self,
        client: &Client,
        origin: Option<&carapi_sdk::Answer<()>>,
        sandbox: bool,
    ) {
        let Some(a) = origin else {
            return self.show_charge(client, sandbox).await;
        };
        let (note, warning) = crate::archive::provenance(a);
        if let Some(w) = warning {
            self.shell.warn(w);
        }
        match note {
            Some(n) => self.shell.note(n),
            None => self.show_charge(client, sandbox).await,
        }
    }

    /// Keeps the account's prices read by a command (`saldo`, a batch's preview, a lookup's
    /// pricing) for the next ones: see [`crate::prices`].
    pub(crate) fn remember_prices(&self, precos: &carapi_sdk::Precos) {
        if let Some((base_url, key)) = &self.used_conta {
            crate::prices::remember(&self.paths, base_url, key, precos);
        }
    }

    /// After a charged lookup: where its answer came from and what it cost (stderr,
    /// [`Context::show_origin`]), then, with `-o json`, its JSON (with `origem` and
    /// `compradoEm` through the archive). True when the JSON was printed: nothing more to show.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) async fn consulta_answer<T: serde::Serialize>(
        &mut self,
        client: &Client,
        origin: Option<&carapi_sdk::Answer<()>>,
        (sandbox, format): (bool, OutputFormat),
        value: &T,
    ) -> Result<bool> {
        self.show_origin(client, origin, sandbox).await;
        if format != OutputFormat::Json {
            return Ok(false);
        }
        self.shell
            .json(&crate::archive::json_with_origin(value, origin))?;
        Ok(true)
    }

    /// A free answer: with `-o json`, printed as the API's JSON (`None`: nothing more to show);
    /// else given back to be shown.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn free_answer<T: serde::Serialize>(
        &mut self,
        format: OutputFormat,
        value: T,
    ) -> Result<Option<T>> {
        if format == OutputFormat::Json {
            self.shell.json(&value)?;
            return Ok(None);
        }
        Ok(Some(value))
    }

    /// The base URL requests went to, once a client was built.
    pub(crate) fn used_base_url(&self) -> Option<&str> {
        self.used_base_url.as_deref()
    }

    /// Stops the local server, if one was started.
    pub(crate) async fn shutdown(&mut self) {
        #[cfg(feature = "local")]
        if let Some(l) = self.local.take() {
            l.shutdown().await;
        }
    }
}

/// The error of `--local` and `carapi local` in a build without the `local` feature (exit 2).
#[cfg(not(feature = "local"))]
pub(crate) fn no_local_mode() -> CliError {
    CliError::new(
        Kind::Usage,
        "SEM_MODO_LOCAL",
        "esta compilação do carapi não tem o modo local (feature `local`)",
    )
    .hint("instale com o modo local: cargo install carapi-cli (sem --no-default-features), ou use --url-base URL")
}
