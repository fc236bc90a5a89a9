//! The application's own money, serialised by its own serde_json: depending on carapi-sdk must
//! not change it (`.ci/sdk-footprint` expects `"1.30"` and `"12345678901234567.89"`).

use rust_decimal::Decimal;

fn main() {
    let own: [Decimal; 2] = [carapi_sdk::dec!(1.30), carapi_sdk::dec!(12345678901234567.89)];
    for d in own {
        println!("{}", serde_json::to_string(&d).expect("a Decimal serialises"));
    }
}
