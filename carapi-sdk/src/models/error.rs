use serde::{Deserialize, Serialize};

/// ApiError: the body of every error response (contract, "ApiError"; "Errors").
///
/// The SDK turns it into [`Error::Api`](crate::Error::Api) with a typed
/// [`ErrorCode`](crate::ErrorCode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ApiError))]
#[serde(rename_all = "camelCase")]
pub struct ApiErrorBody {
    /// Always false.
    #[serde(default)]
    pub success: bool,
    /// The stable error code, e.g. `SALDO_INSUFICIENTE`.
    pub error: String,
    /// A readable message in Portuguese.
    pub message: String,
    /// Present and true when the error came from a reserved sandbox value.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub sandbox: bool,
}
