//! The HTTP edge over a real socket, on SQLite and PostgreSQL: methods the contract does not
//! list, absurd paths, time-outs, the connection bound, body limits, the per-address limit of
//! failed authentications, the `Carapi-Limite` header and the schema's ranges.

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::helpers::CODIGO;
use crate::network::{Server, raw, read_until_close, requested, servers};

const CONSULTAS: [&str; 4] = [
    "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
    "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47/completo",
    "/v1/car/DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47/recibo",
    "/v1/proprietario/52998224725",
];

async fn nothing_charged(s: &Server, key: &str, saldo: f64) {
    assert_eq!(s.saldo(key).await, saldo, "[{}] balance changed", s.name);
    assert_eq!(s.historico_total(key).await, 0, "[{}] history grew", s.name);
    let (_, _, uso) = s.get(key, "/v1/uso").await;
    assert_eq!(uso["itens"], json!([]), "[{}] {uso}", s.name);
    s.ledger_clean().await;
}

#[tokio::test]
async fn head_and_unlisted_methods_are_405_with_allow_never_charged_nor_counted() {
    for s in servers("head_405", |c| c.rate_limit = std::num::NonZeroU32::new(10)).await {
        let c = s.conta(100).await;
        let auth = format!("Authorization: Bearer {}", c.api_key);
        for path in CONSULTAS {
            for method in ["HEAD", "OPTIONS", "DELETE", "PATCH", "POST", "PUT", "TRACE"] {
                let r = raw(&s.srv, &requested(method, path, &[auth.as_bytes()], b"")).await;
                assert_eq!(r.status, 405, "[{}] {method} {path}: {r:?}", s.name);
                assert!(r.has("allow: get"), "[{}] {method} {path}: {r:?}", s.name);
                if method != "HEAD" {
                    let v = r.json();
                    assert_eq!(
                        (v["success"].as_bool(), v["error"].as_str()),
                        (Some(false), Some("SPEC_NAO_ENCONTRADA"))
                    );
                }
            }
        }
        // Far more than the 10 per second: none of them was counted.
        nothing_charged(&s, &c.api_key, 100.0).await;
        for (method, path, allow) in [
            ("HEAD", "/v1/saldo", "allow: get"),
            ("DELETE", "/v1/limites", "allow: get, put"),
            ("GET", "/v1/recarga", "allow: post"),
            ("HEAD", "/webhooks/pix", "allow: post"),
            ("OPTIONS", "/openapi.json", "allow: get"),
        ] {
            let r = raw(&s.srv, &requested(method, path, &[auth.as_bytes()], b"")).await;
            assert_eq!(r.status, 405, "[{}] {method} {path}: {r:?}", s.name);
            assert!(r.has(allow), "[{}] {method} {path}: {r:?}", s.name);
        }
        for path in [
            "/",
            "/v1",
            "/v1/saldo/",
            "/v2/saldo",
            "/v1/car/",
            "/v1/car/X/outro",
        ] {
            let r = raw(&s.srv, &requested("GET", path, &[auth.as_bytes()], b"")).await;
            assert_eq!(r.status, 404, "[{}] {path}: {r:?}", s.name);
            assert_eq!(r.json()["error"], "SPEC_NAO_ENCONTRADA");
        }
        nothing_charged(&s, &c.api_key, 100.0).await;
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn absurd_path_segments_are_refused_without_a_history_row_and_keys_are_capped() {
    for s in servers("segmento_absurdo", |_| {}).await {
        let c = s.conta(100).await;
        // Under the head bound (32 KiB by default; past it: 431, `header.rs`).
        let huge = "A".repeat(20_000);
        for (path, codigo) in [
            (format!("/v1/car/{huge}"), "CODIGO_CAR_INVALIDO"),
            (format!("/v1/car/{huge}/completo"), "CODIGO_CAR_INVALIDO"),
            (
                format!("/v1/car/{}/recibo", "B".repeat(300)),
                "CODIGO_CAR_INVALIDO",
            ),
            (
                format!("/v1/proprietario/{}", "1".repeat(300)),
                "CPF_CNPJ_INVALIDO",
            ),
            (
                format!("/v1/recarga/{}", "f".repeat(300)),
                "RECARGA_NAO_ENCONTRADA",
            ),
        ] {
            let (st, _, v) = s.get(&c.api_key, &path).await;
            assert_eq!(
                (st, v["error"].as_str()),
                (
                    if codigo == "RECARGA_NAO_ENCONTRADA" {
                        404
                    } else {
                        400
                    },
                    Some(codigo)
                ),
                "[{}] {v}",
                s.name
            );
        }
        assert_eq!(
            s.historico_total(&c.api_key).await,
            0,
            "[{}] a refused absurd path was recorded",
            s.name
        );
        // Below the bound: recorded as a failure, with only the first 64 characters.
        let long = "C".repeat(200);
        let (st, _, _) = s.get(&c.api_key, &format!("/v1/car/{long}")).await;
        assert_eq!(st, 400);
        let (_, _, h) = s.get(&c.api_key, "/v1/historico").await;
        assert_eq!(h["total"], 1, "[{}] {h}", s.name);
        assert_eq!(
            h["itens"][0]["chaveConsulta"],
            "C".repeat(64),
            "[{}] {h}",
            s.name
        );
        nothing_charged_but_historico(&s, &c.api_key).await;
        s.srv.shutdown().await;
    }
}

async fn nothing_charged_but_historico(s: &Server, key: &str) {
    assert_eq!(s.saldo(key).await, 100.0, "[{}]", s.name);
    s.ledger_clean().await;
}

#[tokio::test]
async fn every_401_says_bearer_and_failed_authentications_are_limited_per_address() {
    for s in servers("nao_autenticado", |c| {
        c.edge.unauthenticated_per_second = std::num::NonZeroU32::new(5);
    })
    .await
    {
        let c = s.conta(100).await;
        let r = s.http.get(s.url("/v1/saldo")).send().await.unwrap();
        assert_eq!(r.status(), 401);
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let mut limited = 0;
        for i in 0..40 {
            let r = s
                .http
                .get(s.url("/v1/saldo"))
                .bearer_auth(format!("car_{i}"))
                .send()
                .await
                .unwrap();
            match r.status().as_u16() {
                401 => assert_eq!(r.headers()["www-authenticate"], "Bearer"),
                429 => {
                    assert_eq!(r.headers()["carapi-limite"], "taxa", "[{}]", s.name);
                    assert!(r.headers().contains_key("retry-after"));
                    let v: serde_json::Value = r.json().await.unwrap();
                    assert_eq!(v["error"], "LIMITE_EXCEDIDO");
                    limited += 1;
                }
                other => panic!("[{}] status {other}", s.name),
            }
        }
        assert!(
            limited >= 30,
            "[{}] only {limited} of 40 bad keys were limited",
            s.name
        );
        // The block ends: after it, a valid key from the same address is served.
        tokio::time::sleep(Duration::from_millis(1_500)).await;
        assert_eq!(s.saldo(&c.api_key).await, 100.0);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn every_429_names_the_limit_it_hit() {
    for s in servers("carapi_limite", |c| {
        c.rate_limit = std::num::NonZeroU32::new(3)
    })
    .await
    {
        let c = s.conta(100).await;
        let mut rate = None;
        for _ in 0..10 {
            let (st, h, _) = s.get(&c.api_key, "/v1/limites").await;
            if st == 429 {
                rate = Some(h);
                break;
            }
        }
        let h = rate.expect("the per-key rate was never hit");
        assert_eq!(h["carapi-limite"], "taxa", "[{}]", s.name);
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let r = s
            .http
            .put(s.url("/v1/limites"))
            .bearer_auth(&c.api_key)
            .json(&json!({"limiteDiarioRequisicoes": 1}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let (st, _, _) = s.get(&c.api_key, CONSULTAS[0]).await;
        assert_eq!(st, 200);
        let (st, h, v) = s.get(&c.api_key, CONSULTAS[0]).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (429, Some("LIMITE_EXCEDIDO")),
            "[{}] {v}",
            s.name
        );
        assert_eq!(h["carapi-limite"], "diario", "[{}]", s.name);
        tokio::time::sleep(Duration::from_millis(1_100)).await;
        let r = s
            .http
            .put(s.url("/v1/limites"))
            .bearer_auth(&c.api_key)
            .json(&json!({"limiteDiarioRequisicoes": null, "limiteMensalReais": 1.5}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let (st, h, v) = s.get(&c.api_key, CONSULTAS[0]).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (429, Some("LIMITE_EXCEDIDO")),
            "[{}] {v}",
            s.name
        );
        assert_eq!(h["carapi-limite"], "mensal", "[{}]", s.name);
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_time_out() {
    for s in servers("silencio", |c| {
        c.edge.header_timeout = Duration::from_secs(1)
    })
    .await
    {
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        let r = read_until_close(&mut tcp).await;
        assert!(r.body.is_empty() || r.status == 408, "[{}] {r:?}", s.name);
        // Half a request line, then silence: closed too.
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        tcp.write_all(b"GET /v1/saldo HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        read_until_close(&mut tcp).await;
        // A kept-alive connection left idle after its answer: closed too.
        let c = s.conta(1).await;
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        let requested = format!(
            "GET /v1/saldo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\r\n",
            c.api_key
        );
        tcp.write_all(requested.as_bytes()).await.unwrap();
        let r = read_until_close(&mut tcp).await;
        assert_eq!(r.status, 200, "[{}] {r:?}", s.name);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn a_slow_body_gets_408_and_a_big_one_413_as_api_error_json() {
    for s in servers("corpo_lento", |c| {
        c.edge.body_timeout = Duration::from_secs(1);
        c.edge.max_body = 4_096;
    })
    .await
    {
        let c = s.conta(100).await;
        let auth = format!("Authorization: Bearer {}", c.api_key);
        let head = format!(
            "PUT /v1/limites HTTP/1.1\r\nHost: x\r\n{auth}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"limite"
        );
        let mut tcp = TcpStream::connect(s.srv.addr()).await.unwrap();
        tcp.write_all(head.as_bytes()).await.unwrap();
        let r = read_until_close(&mut tcp).await;
        assert_eq!(r.status, 408, "[{}] {r:?}", s.name);
        assert_eq!(r.json()["success"], false);
        let large = format!("{{\"valor\": 500, \"x\": \"{}\"}}", "x".repeat(10_000));
        let r = raw(
            &s.srv,
            &requested("POST", "/v1/recarga", &[auth.as_bytes()], large.as_bytes()),
        )
        .await;
        assert_eq!(r.status, 413, "[{}] {r:?}", s.name);
        assert_eq!(r.json()["success"], false);
        let (_, _, v) = s.get(&c.api_key, "/v1/recargas").await;
        assert_eq!(v["total"], 0, "[{}] {v}", s.name);
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn connections_over_the_bound_do_not_stall_new_ones() {
    for s in servers("limite_conexoes", |c| {
        c.edge.max_connections = 4;
        c.edge.header_timeout = Duration::from_secs(1);
    })
    .await
    {
        let c = s.conta(100).await;
        let mut silent = Vec::new();
        for _ in 0..5 {
            silent.push(TcpStream::connect(s.srv.addr()).await.unwrap());
        }
        // Served once the header time-out frees a slot.
        assert_eq!(s.saldo(&c.api_key).await, 100.0, "[{}]", s.name);
        drop(silent);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn pages_and_sizes_of_any_size_in_the_schema_are_200() {
    for s in servers("paginacao", |_| {}).await {
        let c = s.conta(100).await;
        let (st, _, _) = s.get(&c.api_key, &format!("/v1/car/{CODIGO}")).await;
        assert_eq!(st, 200);
        for base in ["/v1/recargas", "/v1/historico"] {
            let (st, _, v) = s
                .get(&c.api_key, &format!("{base}?page=4503599627370496"))
                .await;
            assert_eq!(st, 200, "[{}] {base} {v}", s.name);
            assert_eq!(v["itens"], json!([]));
            let (st, _, v) = s
                .get(
                    &c.api_key,
                    &format!("{base}?size=119034048163258763347027474362925056"),
                )
                .await;
            assert_eq!(
                (st, v["size"].as_u64()),
                (200, Some(100)),
                "[{}] {base} {v}",
                s.name
            );
            for outside in ["page=0", "size=0", "page=-1", "size=abc", "page=1.5"] {
                let (st, _, v) = s.get(&c.api_key, &format!("{base}?{outside}")).await;
                assert_eq!(
                    (st, v["error"].as_str()),
                    (400, Some("PARAMETRO_INVALIDO")),
                    "[{}] {base}?{outside} {v}",
                    s.name
                );
            }
        }
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn any_finite_valor_up_to_the_largest_top_up_gets_a_preview_and_numbers_must_be_json_numbers()
{
    for s in servers("faixas_numeros", |_| {}).await {
        let c = s.conta(100).await;
        for (valor, pago, bonus) in [
            ("0", 0.0, 0.0),
            ("-3", -3.0, 0.0),
            ("0.001", 0.0, 0.0),
            ("1000", 1000.0, 50.0),
            ("1e6", 1e6, 1e5),
        ] {
            let (st, _, v) = s
                .get(&c.api_key, &format!("/v1/recarga/faixas?valor={valor}"))
                .await;
            assert_eq!(st, 200, "[{}] valor={valor}: {v}", s.name);
            assert_eq!(
                v["preview"]["valorPago"].as_f64(),
                Some(pago),
                "valor={valor}: {v}"
            );
            assert_eq!(
                v["preview"]["valorBonus"].as_f64(),
                Some(bonus),
                "valor={valor}: {v}"
            );
        }
        // Above the largest top-up or no number: 200 without a preview (the contract lists
        // only 200 here, and `preview` is nullable), never a float preview.
        for valor in ["abc", "1e300", "5.748219107376194e+16"] {
            let (st, _, v) = s
                .get(&c.api_key, &format!("/v1/recarga/faixas?valor={valor}"))
                .await;
            assert_eq!(st, 200, "{valor}: {v}");
            assert!(v["preview"].is_null(), "{valor}: {v}");
        }
        for (path, body, codigo) in [
            ("/v1/recarga", json!({"valor": "500"}), "VALOR_INVALIDO"),
            (
                "/v1/limites",
                json!({"limiteMensalReais": "2.5"}),
                "LIMITE_INVALIDO",
            ),
            (
                "/v1/limites",
                json!({"limiteDiarioRequisicoes": "5"}),
                "LIMITE_INVALIDO",
            ),
        ] {
            let req = if path == "/v1/recarga" {
                s.http.post(s.url(path))
            } else {
                s.http.put(s.url(path))
            };
            let r = req
                .bearer_auth(&c.api_key)
                .json(&body)
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 400, "[{}] {path} {body}", s.name);
            let v: serde_json::Value = r.json().await.unwrap();
            assert_eq!(v["error"], codigo, "{path} {body}: {v}");
        }
        let (_, _, v) = s.get(&c.api_key, "/v1/limites").await;
        assert_eq!(
            v["limiteMensalReais"],
            serde_json::Value::Null,
            "[{}] {v}",
            s.name
        );
        s.ledger_clean().await;
        s.srv.shutdown().await;
    }
}

/// A connection from `origem` (a loopback address) to `s`.
async fn connect_from(origin: [u8; 4], s: &Server) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind(std::net::SocketAddr::from((origin, 0)))
        .unwrap();
    socket.connect(s.srv.addr()).await.unwrap()
}

/// `GET /v1/saldo` with `key` on a new connection from `origem`: the status (0 when the server
/// closed the connection without answering).
async fn saldo_de(origin: [u8; 4], s: &Server, key: &str) -> u16 {
    let mut tcp = connect_from(origin, s).await;
    let auth = format!("Authorization: Bearer {key}");
    // The server may have closed it already: then the write fails and nothing is read.
    let _ = tcp
        .write_all(&requested("GET", "/v1/saldo", &[auth.as_bytes()], b""))
        .await;
    read_until_close(&mut tcp).await.status
}

#[tokio::test]
async fn one_address_over_its_bound_is_closed_while_another_address_is_served() {
    for s in servers("por_endereco", |c| {
        c.edge.connections_per_address = Some(8);
        c.edge.max_connections = 64;
        // Idle sockets stay open for the whole test.
        c.edge.header_timeout = Duration::from_secs(60);
    })
    .await
    {
        let c = s.conta(100).await;
        let mut idle = Vec::new();
        for _ in 0..8 {
            idle.push(connect_from([127, 0, 0, 1], &s).await);
        }
        // Accepted in order after the 8 idle ones: past the bound, closed unanswered.
        assert_eq!(
            saldo_de([127, 0, 0, 1], &s, &c.api_key).await,
            0,
            "[{}]",
            s.name
        );
        // Another address is served meanwhile.
        assert_eq!(
            saldo_de([127, 0, 0, 2], &s, &c.api_key).await,
            200,
            "[{}]",
            s.name
        );
        // Once one of the first address's connections closes, it is served again.
        drop(idle.pop());
        let mut status = 0;
        for _ in 0..200 {
            status = saldo_de([127, 0, 0, 1], &s, &c.api_key).await;
            if status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(status, 200, "[{}]", s.name);
        drop(idle);
        s.srv.shutdown().await;
    }
}

#[tokio::test]
async fn a_trusted_proxy_socket_counts_toward_no_per_address_connection_bound() {
    for s in servers("por_endereco_proxy", |c| {
        c.edge.connections_per_address = Some(8);
        c.edge.max_connections = 64;
        c.edge.header_timeout = Duration::from_secs(60);
        c.edge.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await
    {
        let c = s.conta(100).await;
        let mut idle = Vec::new();
        for _ in 0..20 {
            idle.push(connect_from([127, 0, 0, 1], &s).await);
        }
        // The proxy holds 20 connections, past the bound of 8, and is still served.
        assert_eq!(
            saldo_de([127, 0, 0, 1], &s, &c.api_key).await,
            200,
            "[{}]",
            s.name
        );
        // An untrusted address keeps its bound.
        let mut others = Vec::new();
        for _ in 0..8 {
            others.push(connect_from([127, 0, 0, 2], &s).await);
        }
        assert_eq!(
            saldo_de([127, 0, 0, 2], &s, &c.api_key).await,
            0,
            "[{}]",
            s.name
        );
        drop((idle, others));
        s.srv.shutdown().await;
    }
}
