//! `carapi recarga faixas|criar|status`: PIX top-ups (free endpoints).
//!
//! `criar` shows the bonus preview, then the QR code (Unicode half blocks, scannable from the
//! screen) and the copy-and-paste payload on stdout, then waits for the payment with a spinner,
//! reading the status at least 5 s apart (SDK `wait_for_recarga`) until `Confirmado` (prints
//! amount, bonus and the new balance), `Rejeitado` (exit 1) or `--tempo-limite` (default 30 min).
//! Ctrl-C stops waiting (exit 130) and says how to resume: `carapi recarga status ID --esperar`.
//!
//! A legacy-price account must accept the new prices (shown beside its current ones): a prompt on
//! a terminal, or `--confirmar-novos-precos`; otherwise nothing is created (exit 2).
//!
//! With `-o json`, `criar` prints the creation response and, after waiting, the final status
//! response: two JSON documents one after the other (`jq` reads both).

use std::time::Duration;

use carapi_sdk::domain::brl;
use carapi_sdk::{
    Client, FaixasResponse, NovaRecarga, Precos, RecargaStatus, RecargaStatusResponse,
};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use crate::format::{CellValue, Fields, Listing};
use crate::options::FormatArgs;
use crate::output::OutputFormat;
use crate::parsers::{parse_duration, parse_id};
use crate::qr;
use carapi_sdk::domain::brl::parse_reais;

/// Arguments of `carapi recarga`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The subcommand.
    #[command(subcommand)]
    pub(crate) command: Sub,
}

/// Subcommands of `carapi recarga`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Sub {
    /// Faixas de bônus, valor mínimo e preços; com --valor, a prévia do bônus
    Faixas {
        /// Valor da recarga para a prévia (ex.: 1000 ou 1.000,00)
        #[arg(long, value_name = "V", value_parser = parse_reais, allow_negative_numbers = true)]
        valor: Option<Decimal>,
        /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
        #[command(flatten)]
        format: FormatArgs,
    },
    /// Cria uma recarga PIX, mostra o QR code e aguarda o pagamento
    #[command(name = "criar")]
    Create(CreateArgs),
    /// Status de uma recarga; com --esperar, aguarda até Confirmado ou Rejeitado
    Status {
        /// ID da recarga
        #[arg(value_name = "ID", value_parser = parse_id)]
        id: Uuid,
        /// Aguarda o pagamento
        #[arg(long = "esperar", alias = "wait")]
        wait: bool,
        /// Tempo máximo de espera com --esperar (ex.: 30m, 1h)
        #[arg(long = "tempo-limite", alias = "timeout", value_name = "DUR", default_value = "30m", value_parser = parse_duration)]
        timeout: humantime::Duration,
        /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
        #[command(flatten)]
        format: FormatArgs,
    },
}

/// Arguments of `carapi recarga criar`.
#[derive(Debug, clap::Args)]
pub(crate) struct CreateArgs {
    /// Valor em reais (mínimo 500; ex.: 500, 1.000,50, R$ 2.000,00)
    #[arg(value_name = "VALOR", value_parser = parse_reais, allow_negative_numbers = true)]
    pub(crate) valor: Decimal,
    /// Aceita a nova tabela de preços (contas na tabela legada)
    #[arg(long)]
    confirmar_novos_precos: bool,
    /// Não aguarda o pagamento
    #[arg(long = "sem-esperar", alias = "no-wait")]
    no_wait: bool,
    /// Tempo máximo de espera (ex.: 30m, 1h, 90s)
    #[arg(long = "tempo-limite", alias = "timeout", value_name = "DUR", default_value = "30m", value_parser = parse_duration)]
    pub(crate) timeout: humantime::Duration,
    /// Grava também a imagem PNG do QR code (para abrir em outro aparelho)
    #[arg(long, value_name = "ARQUIVO")]
    qr_png: Option<std::path::PathBuf>,
    /// `-o/--formato` given after the subcommand ([`Context::format`] falls back to the one before it).
    #[command(flatten)]
    pub(crate) format: FormatArgs,
}

/// Runs `carapi recarga ...`.
///
/// # Errors
/// Amount below the minimum (2), legacy prices not confirmed (2), 401 (3), unknown top-up (4),
/// `Rejeitado` or time-out (1), 502 `ERRO_PIX`/network (7), Ctrl-C (130).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    match args.command {
        Sub::Faixas { valor, format } => faixas(ctx, valor, ctx.format(format)).await,
        Sub::Create(args) => create(ctx, args).await,
        Sub::Status {
            id,
            wait,
            timeout,
            format,
        } => {
            let format = ctx.format(format);
            status(ctx, id, wait, timeout.into(), format).await
        }
    }
}

async fn faixas(ctx: &mut Context, valor: Option<Decimal>, format: OutputFormat) -> Result<()> {
    let f = ctx.client().await?.faixas_recarga(valor).await?;
    if format == OutputFormat::Json {
        return Ok(ctx.shell.json(&f)?);
    }
    let mut t = Listing::new(&[
        ("valorMinimo", "A partir de"),
        ("valorMaximo", "Até"),
        ("percentualBonus", "Bônus"),
    ]);
    for tier in &f.faixas {
        t.push_row(vec![
            CellValue::money(tier.valor_minimo),
            CellValue::optional_money(tier.valor_maximo, "sem teto"),
            CellValue::percent(tier.percentual_bonus),
        ]);
    }
    ctx.shell.listing(&t, format)?;
    if format == OutputFormat::Table {
        ctx.shell.line(format!(
            "Valor mínimo de recarga: {}",
            brl::format(f.valor_minimo)
        ))?;
        if let Some(p) = &f.preview {
            ctx.shell.line(format!(
                "Prévia: pagando {} você recebe {} de bônus ({}), total creditado {}",
                brl::format(p.valor_pago),
                brl::format(p.valor_bonus),
                CellValue::percent(p.percentual_bonus).human,
                brl::format(p.total_creditado)
            ))?;
        }
        if f.usa_preco_legado {
            ctx.shell.line(
                "Sua conta usa a tabela de preços legada; a próxima recarga muda para a atual:",
            )?;
            let t = compare_prices(&f.precos_atuais, &f.precos_apos_recarga);
            ctx.shell.listing(&t, OutputFormat::Table)?;
        }
    }
    Ok(())
}

/// The price comparison of a legacy account: each lookup's price now and after the top-up.
fn compare_prices(current: &Precos, after: &Precos) -> Listing {
    let mut t = Listing::new(&[
        ("consulta", "Consulta"),
        ("precoAtual", "Preço atual"),
        ("precoAposRecarga", "Após a recarga"),
    ]);
    for (name, a, b) in [
        ("CAR básico", current.car_basico, after.car_basico),
        ("CAR completo", current.car_completo, after.car_completo),
        ("Proprietário", current.proprietario, after.proprietario),
        ("Recibo", current.recibo, after.recibo),
    ] {
        t.push_row(vec![
            CellValue::text(name),
            CellValue::money(a),
            CellValue::money(b),
        ]);
    }
    t
}

/// Asks a legacy account to accept the new prices. `Ok(true)` when accepted.
fn confirm_new_prices(ctx: &mut Context, f: &FaixasResponse, flag: bool) -> Result<bool> {
    if !f.confirmar_novos_precos_obrigatorio {
        return Ok(false);
    }
    let listing = compare_prices(&f.precos_atuais, &f.precos_apos_recarga)
        .to_table(ctx.shell.err_color(), None)
        .table;
    ctx.shell.note(format!(
        "Sua conta usa a tabela de preços legada. Com esta recarga, os preços passam a ser:\n{listing}"
    ));
    if flag {
        return Ok(true);
    }
    if !ctx.shell.can_prompt() {
        return Err(CliError::new(
            Kind::Usage,
            "CONFIRMACAO_PRECOS_OBRIGATORIA",
            "a recarga muda sua conta para a tabela de preços atual e precisa de confirmação; nada foi criado",
        )
        .hint("repita com --confirmar-novos-precos para aceitar os novos preços"));
    }
    if crate::prompt::confirm("Aceita os novos preços e continuar com a recarga?")? {
        Ok(true)
    } else {
        Err(CliError::other(
            "CANCELADO",
            "recarga cancelada; nada foi criado",
        ))
    }
}

async fn create(ctx: &mut Context, args: CreateArgs) -> Result<()> {
    let format = ctx.format(args.format);
    let client = ctx.client().await?;
    let mut ctrl_c = listen_ctrl_c().await;
    let f = client.faixas_recarga(Some(args.valor)).await?;
    let flag = args.confirmar_novos_precos;
    let confirm = confirm_new_prices(ctx, &f, flag)? || flag;
    let r = client
        .criar_recarga(&NovaRecarga {
            valor: args.valor,
            confirmar_novos_precos: confirm,
        })
        .await?;
    if let Some(p) = &args.qr_png {
        save_png(p, &r.qr_code_base64)?;
        ctx.shell
            .note(format!("Imagem do QR code gravada em {}.", p.display()));
    }
    show_created(ctx, &r, format)?;
    if ctx.global.local {
        // The local server has no bank: the payment is simulated from another terminal (one
        // line under the amount, in the PIX screen's spare line).
        ctx.shell.note(format!(
            "Pague (modo local): carapi local pagar {}",
            r.recarga_id
        ));
    }
    ctx.shell.flush()?;
    if args.no_wait {
        ctx.shell.note(format!(
            "Para acompanhar: carapi recarga status {} --esperar",
            r.recarga_id
        ));
        return Ok(());
    }
    let st = wait_for_payment(ctx, &client, r.recarga_id, args.timeout.into(), &mut ctrl_c).await?;
    final_status(ctx, &st, format)
}

/// The PNG the API sent (`qrCodeBase64`), saved for another device.
fn save_png(p: &std::path::Path, base64_png: &str) -> Result<()> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64_png.trim())
        .map_err(|e| {
            tracing::debug!("qrCodeBase64: {e}");
            CliError::other("QR", "qrCodeBase64 inválido: não é base64")
        })?;
    std::fs::write(p, bytes).map_err(|e| CliError::io_at(p, e))
}

fn show_created(
    ctx: &mut Context,
    r: &carapi_sdk::RecargaCriadaResponse,
    format: OutputFormat,
) -> Result<()> {
    match format {
        OutputFormat::Json => ctx.shell.json(r)?,
        OutputFormat::Csv | OutputFormat::RawCsv => {
            let mut c = Fields::new();
            c.add("recargaId", "ID", CellValue::text(r.recarga_id.to_string()))
                .add("paymentId", "Pagamento", CellValue::text(&r.payment_id))
                .add("valor", "Valor", CellValue::money(r.valor))
                .add("status", "Status", CellValue::text(r.status.as_str()))
                .add(
                    "reaproveitada",
                    "Reaproveitada",
                    CellValue::boolean(r.reaproveitada),
                )
                .add(
                    "percentualBonus",
                    "Bônus (%)",
                    CellValue::percent(r.preview_bonus.percentual_bonus),
                )
                .add(
                    "valorBonus",
                    "Bônus",
                    CellValue::money(r.preview_bonus.valor_bonus),
                )
                .add(
                    "totalCreditado",
                    "Total creditado",
                    CellValue::money(r.preview_bonus.total_creditado),
                )
                .add("qrCode", "PIX copia e cola", CellValue::text(&r.qr_code));
            ctx.shell.fields(&c, format)?;
        }
        OutputFormat::Table | OutputFormat::Geojson => {
            let mut before = vec![format!("ID da recarga: {}", r.recarga_id)];
            if r.reaproveitada {
                before.push(
                    "(reaproveitada: PIX pendente do mesmo valor, criado há menos de 10 min)"
                        .into(),
                );
            }
            let valor = format!(
                "Recarga de {}: bônus {} ({}), total {}",
                brl::format(r.valor),
                brl::format(r.preview_bonus.valor_bonus),
                CellValue::percent(r.preview_bonus.percentual_bonus).human,
                brl::format(r.preview_bonus.total_creditado)
            );
            show_pix(&mut ctx.shell, &r.qr_code, &before, &valor)?;
        }
    }
    Ok(())
}

/// The PIX screen: `PIX copia e cola:`, the payload and the `before` lines (they may scroll
/// away), then the QR code and one line with the amount, `valor`, right under it.
///
/// Sized for an 80x24 terminal: the reference server's BR Code is a version-5 QR code (37
/// modules) at level L ([`qr::EC_LEVEL`]), 21 lines with the quiet zone ([`qr::QUIET_ZONE`]); with the
/// amount line and the waiting spinner below it, the whole code stays on screen, with one line
/// to spare.
fn show_pix(
    sh: &mut crate::output::Shell,
    payload: &str,
    before: &[String],
    valor: &str,
) -> Result<()> {
    sh.line("PIX copia e cola:")?;
    sh.line(payload)?;
    for l in before {
        sh.line(l)?;
    }
    sh.line(qr::render(payload, sh.out_color())?)?;
    sh.line(valor)?;
    Ok(())
}

/// A Ctrl-C listener, registered at once (before the QR is printed), so a Ctrl-C at any moment
/// after that is seen by the wait.
type CtrlC = std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<()>> + Send>>;

async fn listen_ctrl_c() -> CtrlC {
    let mut s: CtrlC = Box::pin(tokio::signal::ctrl_c());
    let _ = futures::poll!(s.as_mut());
    s
}

async fn wait_for_payment(
    ctx: &mut Context,
    client: &Client,
    id: Uuid,
    timeout: Duration,
    ctrl_c: &mut CtrlC,
) -> Result<RecargaStatusResponse> {
    let sp = ctx
        .shell
        .spinner("Aguardando o pagamento do PIX (Ctrl-C para parar)");
    let r = tokio::select! {
        r = client.wait_for_recarga(id, timeout) => r,
        _ = ctrl_c.as_mut() => {
            sp.finish_and_clear();
            return Err(CliError::interrupted(format!(
                "a recarga continua pendente e pode ser paga; para voltar a aguardar: carapi recarga status {id} --esperar"
            )));
        }
    };
    sp.finish_and_clear();
    Ok(r?)
}

fn final_status(ctx: &mut Context, st: &RecargaStatusResponse, format: OutputFormat) -> Result<()> {
    match format {
        OutputFormat::Json => ctx.shell.json(st)?,
        _ => {
            if st.status == RecargaStatus::Confirmado && format == OutputFormat::Table {
                ctx.shell.line(format!(
                    "Recarga confirmada: {} pagos + {} de bônus = {} creditados. Novo saldo: {}",
                    brl::format(st.valor),
                    brl::format(st.valor_bonus.unwrap_or_default()),
                    brl::format(st.total_creditado.unwrap_or(st.valor)),
                    brl::format(st.saldo_atual)
                ))?;
            } else {
                ctx.shell.fields(&status_fields(st), format)?;
            }
        }
    }
    if st.status == RecargaStatus::Rejeitado {
        return Err(CliError::other(
            "RECARGA_REJEITADA",
            format!("a recarga {} foi rejeitada: {}", st.recarga_id, st.message),
        )
        .hint("crie outra: carapi recarga criar VALOR"));
    }
    Ok(())
}

fn status_fields(st: &RecargaStatusResponse) -> Fields {
    let mut c = Fields::new();
    c.add(
        "recargaId",
        "ID",
        CellValue::text(st.recarga_id.to_string()),
    )
    .add("status", "Status", CellValue::text(st.status.as_str()))
    .add("pago", "Pago", CellValue::boolean(st.pago))
    .add("valor", "Valor", CellValue::money(st.valor))
    .add(
        "percentualBonus",
        "Bônus (%)",
        st.percentual_bonus
            .map_or(CellValue::optional(None), CellValue::percent),
    )
    .add(
        "valorBonus",
        "Bônus",
        CellValue::optional_money(st.valor_bonus, "—"),
    )
    .add(
        "totalCreditado",
        "Total creditado",
        CellValue::optional_money(st.total_creditado, "—"),
    )
    .add(
        "saldoAtual",
        "Saldo atual",
        CellValue::money(st.saldo_atual),
    )
    .add("message", "Mensagem", CellValue::text(&st.message))
    .add(
        "qrCode",
        "PIX copia e cola",
        CellValue::optional(st.qr_code.as_deref()),
    );
    c
}

async fn status(
    ctx: &mut Context,
    id: Uuid,
    wait: bool,
    timeout: Duration,
    format: OutputFormat,
) -> Result<()> {
    let client = ctx.client().await?;
    let mut ctrl_c = listen_ctrl_c().await;
    let st = client.recarga(id).await?;
    if !wait || st.status.is_final() {
        return final_status(ctx, &st, format);
    }
    if format == OutputFormat::Table {
        let line = format!(
            "Recarga {} de {}: {}",
            st.recarga_id,
            brl::format(st.valor),
            st.status
        );
        match &st.qr_code {
            Some(payload) => show_pix(&mut ctx.shell, payload, &[], &line)?,
            None => ctx.shell.line(line)?,
        }
        ctx.shell.flush()?;
    }
    let st = wait_for_payment(ctx, &client, id, timeout, &mut ctrl_c).await?;
    final_status(ctx, &st, format)
}
