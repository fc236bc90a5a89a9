//! The generator of the test double's own OpenAPI fragment (cargo feature `openapi`): its
//! `/_teste` routes, their schemas and the `tokenTeste` security scheme. The result is
//! committed as `carapi-test-double/openapi.json` (a test fails when the two drift); a
//! test-mode server serves the service's document merged with it
//! ([`crate::test_mode::assembly::start`]), a normal server never shows it.

use carapi_service::openapi::BearerScheme;
use utoipa::OpenApi;

use crate::test_mode::routes as test;

/// The fragment's definition (feature `openapi`).
#[derive(Debug, OpenApi)]
#[openapi(
    info(
        title = "carapi test double: /_teste routes",
        version = "1.0.0",
        description = "Test mode only (`carapi-server serve --modo-teste`, loopback)."
    ),
    paths(
        test::inject, test::clear_faults, test::clock, test::advance,
        test::create_conta, test::conta, test::pay, test::change_imovel,
    ),
    modifiers(&SECURITY),
    tags(
        (name = "teste", description = "Test mode only (`carapi-server serve --modo-teste`, loopback): faults on demand, the server clock, accounts and payments, changes to a record's data. Bearer: the test token, not an API key. Absent from a normal server."),
    )
)]
pub(crate) struct ApiDoc;

/// The `/_teste` routes' scheme: the test token, not an API key.
const SECURITY: BearerScheme = BearerScheme {
    name: "tokenTeste",
    format: "test token (--token-teste)",
};

/// The fragment generated from the code, as pretty JSON with a trailing newline (the committed
/// file's exact bytes when they agree; feature `openapi`).
pub fn json() -> String {
    let mut s = ApiDoc::openapi()
        .to_pretty_json()
        .expect("the OpenAPI fragment serialises");
    s.push('\n');
    s
}
