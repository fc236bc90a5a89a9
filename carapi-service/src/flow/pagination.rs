//! Shared pagination rules of the history and top-up list (contract, "Shared pagination
//! parameters"): `page` 1-based, default 1, minimum 1; `size` default 20, minimum 1, values
//! above 100 reduced to 100.

use crate::api_error::ApiError;

/// Default page size.
pub(crate) const DEFAULT_SIZE: u32 = 20;
/// Largest page size.
pub(crate) const MAX_SIZE: u32 = 100;

/// `(page, size)` after the rules; `page` or `size` below 1 is 400 `PARAMETER_INVALID`.
pub(crate) fn page_params(page: Option<u32>, size: Option<u32>) -> Result<(u32, u32), ApiError> {
    let page = page.unwrap_or(1);
    let size = size.unwrap_or(DEFAULT_SIZE);
    if page < 1 {
        return Err(ApiError::param("page deve ser maior ou igual a 1."));
    }
    if size < 1 {
        return Err(ApiError::param("size deve ser maior ou igual a 1."));
    }
    Ok((page, size.min(MAX_SIZE)))
}

/// Number of pages of `total` items in pages of `size`.
pub(crate) fn total_paginas(total: u64, size: u32) -> u32 {
    u32::try_from(total.div_ceil(u64::from(size.max(1)))).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(page_params(None, None).unwrap(), (1, 20));
        assert_eq!(page_params(Some(3), Some(500)).unwrap(), (3, 100));
        assert!(page_params(Some(0), None).is_err());
        assert!(page_params(None, Some(0)).is_err());
        assert_eq!(total_paginas(0, 20), 0);
        assert_eq!(total_paginas(41, 20), 3);
    }
}
