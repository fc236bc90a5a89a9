//! The generator of the OpenAPI 3.1 document of the service (cargo feature `openapi`): from the
//! handlers' annotations and the SDK's wire models (utoipa 5). The test double documents its
//! own `/_teste` routes (the `carapi-test-double` crate), merged into the served document only
//! in test mode. The result is committed as `carapi-service/openapi.json` (a test fails when the two
//! drift) and served from that committed file (`GET /openapi.json`) in every build.

use utoipa::OpenApi;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

use crate::http::{consulta, conta, recarga, webhooks};

/// The document's definition (feature `openapi`).
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "CAR Data and Account API (carapi reference server)",
        version = "1.0.0",
        description = "Prepaid HTTP API over Brazil's rural environmental registry (CAR). Every `/v1` route requires `Authorization: Bearer <API_KEY>`. Charged: HTTP 200 of the four lookups only."
    ),
    paths(
        consulta::doc::basico, consulta::doc::completo, consulta::doc::recibo, consulta::doc::proprietario,
        conta::saldo, conta::historico, conta::limites, conta::atualizar_limites, conta::uso,
        recarga::faixas, recarga::create, recarga::status, recarga::list_all,
        webhooks::receive,
    ),
    modifiers(&SECURITY),
    tags(
        (name = "consultas", description = "Charged lookups"),
        (name = "conta", description = "Free account endpoints"),
        (name = "recarga", description = "PIX top-ups (free)"),
        (name = "webhooks", description = "Payment-provider callbacks (HMAC-signed, outside /v1)"),
    )
)]
pub(crate) struct ApiDoc;

/// The `/v1` routes' scheme: `Authorization: Bearer <API_KEY>` (contract, "Authentication").
const SECURITY: BearerScheme = BearerScheme {
    name: "bearer",
    format: "API key",
};

/// A bearer security scheme added to a document's components (utoipa's [`utoipa::Modify`]):
/// the service's API key, the test double's test token.
#[derive(Debug, Clone, Copy)]
pub struct BearerScheme {
    /// The scheme's name, as the operations' `security` lists it (`bearer`).
    pub name: &'static str,
    /// What the bearer token is (`bearerFormat`: `API key`).
    pub format: &'static str,
}

impl utoipa::Modify for BearerScheme {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            self.name,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format(self.format)
                    .build(),
            ),
        );
    }
}

/// The document generated from the code, as pretty JSON with a trailing newline (the committed
/// file's exact bytes when they agree; feature `openapi`).
pub fn json() -> String {
    let mut s = ApiDoc::openapi()
        .to_pretty_json()
        .expect("the OpenAPI document serialises");
    s.push('\n');
    s
}
