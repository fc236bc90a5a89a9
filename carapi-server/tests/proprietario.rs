use carapi_sdk::{CpfCnpj, ProprietarioResponse, sandbox};

use crate::helpers::*;

/// Owner of 5 bundled records (dados::embutidos::exemplo_documento).
const OWNER: &str = "385.211.390-39";

#[tokio::test]
async fn owner_lookup_masked_or_bare_ordered_by_code_and_charged() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let mut previous = None;
    for doc in [OWNER, "38521139039", "385.211.390-39%20"] {
        let r = app
            .get(&c.api_key, &format!("/v1/proprietario/{doc}"))
            .await;
        let v = r.ok();
        let typed: ProprietarioResponse = serde_json::from_slice(&r.body).unwrap();
        assert!(!typed.sandbox && !typed.truncado);
        assert_eq!(typed.limite, 200);
        assert_eq!(typed.total as usize, typed.itens.len());
        assert!(typed.total >= 1);
        let codigos: Vec<_> = typed.itens.iter().map(|i| i.registro_car.clone()).collect();
        let mut sorted = codigos.clone();
        sorted.sort();
        assert_eq!(codigos, sorted, "ordered by CAR code");
        assert_eq!(v["itens"][0]["proprietarioConsultado"], OWNER);
        assert!(
            v["itens"][0]["uf"].as_str().unwrap().len() > 2,
            "state written out"
        );
        if let Some(a) = &previous {
            assert_eq!(a, &codigos);
        }
        previous = Some(codigos);
    }
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 2.2);
    let h = app.historico(&c.api_key, "").await;
    assert_eq!(h["itens"][0]["endpoint"], "/v1/proprietario/{cpf_cnpj}");
    assert_eq!(h["itens"][0]["chaveConsulta"], "38521139039");
}

#[tokio::test]
async fn alphanumeric_cnpj_with_slash_encoded_or_not() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    // an alphanumeric CNPJ no bundled record uses
    let doc = CpfCnpj::from_base("ZQ9XW8V70A1B").unwrap();
    let masked = doc.formatted();
    assert!(masked.contains('/'));
    app.write(&copies_with_owner(2, &doc)).await;
    for path in [
        masked.clone(),
        masked.replace('/', "%2F"),
        doc.as_str().to_lowercase(),
    ] {
        let v = app
            .get(&c.api_key, &format!("/v1/proprietario/{path}"))
            .await
            .ok();
        assert_eq!(v["total"], 2, "{path}");
        assert_eq!(v["itens"][0]["proprietarioConsultado"], masked.as_str());
    }
}

#[tokio::test]
async fn invalid_documents_are_400_and_unknown_are_404_never_charged() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    for bad in [
        "529.982.247-24",
        "123.456.789-00",
        "1234567890",
        "12.ABC.345%2F01DE-36",
        "12ABC34501DEAB",
        "abc",
    ] {
        app.get(&c.api_key, &format!("/v1/proprietario/{bad}"))
            .await
            .error(400, "CPF_CNPJ_INVALIDO");
    }
    // valid but without CARs
    let without_cars = CpfCnpj::from_base("135792468").unwrap();
    app.get(
        &c.api_key,
        &format!("/v1/proprietario/{}", without_cars.formatted()),
    )
    .await
    .error(404, "CPF_CNPJ_NAO_ENCONTRADO");
    assert_eq!(app.saldo(&c.api_key).await["saldoReais"], 10.0);
    let h = app.historico(&c.api_key, "?status=erro").await;
    assert_eq!(h["total"], 7);
}

#[tokio::test]
async fn more_than_200_cars_are_truncated() {
    let app = App::new().await;
    let c = app.conta_com(10).await;
    let doc = CpfCnpj::parse("11.222.333/0001-81").unwrap();
    app.write(&copies_with_owner(201, &doc)).await;
    let v = app
        .get(&c.api_key, "/v1/proprietario/11222333000181")
        .await
        .ok();
    assert_eq!(v["truncado"], true);
    assert_eq!(v["total"], 200);
    assert_eq!(v["itens"].as_array().unwrap().len(), 200);
    // exactly 200 is not truncated
    let other = CpfCnpj::parse("00.000.000/0001-91").unwrap();
    let mut batch = copies_with_owner(200, &other);
    for (i, im) in batch.iter_mut().enumerate() {
        im.codigo_car = format!("DF-5300108-{:032X}", 0xA000_0000_u64 + i as u64)
            .parse()
            .unwrap();
    }
    app.write(&batch).await;
    let v = app
        .get(&c.api_key, "/v1/proprietario/00000000000191")
        .await
        .ok();
    assert_eq!(v["truncado"], false);
    assert_eq!(v["total"], 200);
}

#[tokio::test]
async fn sandbox_documents() {
    let app = App::new().await;
    let c = app.conta_com(0).await;
    let v = app
        .get(
            &c.api_key,
            &format!("/v1/proprietario/{}", sandbox::CPF_DOIS_CARS),
        )
        .await
        .ok();
    assert_eq!(v["sandbox"], true);
    assert_eq!(v["total"], 2);
    assert_eq!(v["truncado"], false);
    let v = app
        .get(
            &c.api_key,
            &format!("/v1/proprietario/{}", sandbox::CNPJ_TRUNCADO),
        )
        .await
        .ok();
    assert_eq!(v["sandbox"], true);
    assert_eq!(v["truncado"], true);
    let r = app
        .get(
            &c.api_key,
            &format!("/v1/proprietario/{}", sandbox::CPF_NAO_ENCONTRADO),
        )
        .await;
    assert_eq!(r.error(404, "CPF_CNPJ_NAO_ENCONTRADO")["sandbox"], true);
    // the reserved document masked is the reserved document (carapi_sdk::sandbox normalises
    // before comparing): the same sandbox answer, recorded nowhere
    let r = app.get(&c.api_key, "/v1/proprietario/111.111.111-11").await;
    assert_eq!(r.error(404, "CPF_CNPJ_NAO_ENCONTRADO")["sandbox"], true);
    assert_eq!(
        app.saldo(&c.api_key).await["usoHoje"]["requisicoes"],
        0,
        "sandbox lookups are not recorded"
    );
}
