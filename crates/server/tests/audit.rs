//! The audit trail for admins and operators: `GET /v1/audit` in process, and `workmate audit
//! export|verify` run as the real binary against a chain that is then tampered with.

use axum::http::StatusCode;
use serde_json::json;
use sqlx::{AnyConnection, Connection};
use workmate_protocol::TenantId;
use workmate_store::{ConnectOptions, NewAuditRecord, Store};

use crate::authority::{as_user, people};
use crate::support::run;

#[tokio::test]
async fn admins_read_their_tenants_trail_with_filters_and_pages() {
    let app = people().await;
    for zone in ["Asia/Shanghai", "Europe/Lisbon", "UTC"] {
        let (status, _) = as_user(
            &app,
            "carol",
            "PATCH",
            "/v1/tenant/settings",
            Some(json!({"timezone": zone})),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    app.store.audit().seal(100).await.unwrap();
    let (status, body) = as_user(&app, "alice", "GET", "/v1/audit", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a member: {body}");
    let (status, page) = as_user(
        &app,
        "carol",
        "GET",
        "/v1/audit?stage=tenant_settings_changed&limit=2",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let records = page["records"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(
        records[0]["detail"]["values"]["timezone"], "UTC",
        "newest first"
    );
    assert_eq!(records[0]["actor"], "carol");
    assert!(records[0]["hash"].as_str().unwrap().len() == 64, "{page}");
    let before = page["next_before"].as_str().unwrap();
    let (_, rest) = as_user(
        &app,
        "carol",
        "GET",
        &format!("/v1/audit?stage=tenant_settings_changed&before={before}"),
        None,
    )
    .await;
    assert_eq!(rest["records"].as_array().unwrap().len(), 1);
    assert_eq!(rest["next_before"], serde_json::Value::Null);
    let (_, none) = as_user(&app, "carol", "GET", "/v1/audit?actor=nobody", None).await;
    assert_eq!(none["records"], json!([]));
    let (status, _) = as_user(&app, "carol", "GET", "/v1/audit?limit=0", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = as_user(&app, "carol", "GET", "/v1/audit?colour=red", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[test]
fn export_writes_the_chain_and_verify_finds_an_edit_and_a_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/audit.db?mode=rwc", dir.path().display());
    let tenant = TenantId::from("acme");
    let ids: Vec<String> = block_on(async {
        let store = Store::connect(&url, ConnectOptions::default())
            .await
            .unwrap();
        store.migrate().await.unwrap();
        let mut ids = Vec::new();
        for i in 0..4 {
            let record = NewAuditRecord {
                actor: Some("ana".into()),
                stage: "tool_finished".into(),
                tool: Some("run_shell".into()),
                detail: json!({"n": i}),
                ..NewAuditRecord::default()
            };
            ids.push(store.audit().append(&tenant, &record).await.unwrap().id);
        }
        store.audit().seal(100).await.unwrap();
        store.close().await;
        ids
    });
    let db = ["--database-url", url.as_str()];
    let workmate = |args: &[&str]| {
        let output = run(dir.path(), &[args, &db[..]].concat(), &[]);
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };

    let (code, out, err) = workmate(&["audit", "verify"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("acme: 4 sealed record(s), head 4, 0 not sealed yet: intact"),
        "{out}"
    );

    let (code, out, err) = workmate(&[
        "audit",
        "export",
        "--tenant",
        "acme",
        "--from",
        "2020-01-01",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["seq"], 1);
    assert_eq!(lines[1]["prev_hash"], lines[0]["hash"]);
    assert_eq!(lines[3]["detail"]["n"], 3);
    let (_, out, _) = workmate(&["audit", "export", "--tenant", "acme", "--to", "2020-01-01"]);
    assert!(out.is_empty(), "nothing before 2020: {out}");
    let (code, _, err) = workmate(&["audit", "export", "--tenant", "acme", "--from", "soon"]);
    assert_eq!(code, Some(2), "{err}");

    block_on(async {
        let mut conn = AnyConnection::connect(&url).await.unwrap();
        let edit = format!(
            "UPDATE audit_events SET actor = 'mallory' WHERE audit_id = '{}'",
            ids[1]
        );
        sqlx::query(sqlx::AssertSqlSafe(edit))
            .execute(&mut conn)
            .await
            .unwrap();
        let delete = format!("DELETE FROM audit_events WHERE audit_id = '{}'", ids[2]);
        sqlx::query(sqlx::AssertSqlSafe(delete))
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    });
    let (code, out, err) = workmate(&["audit", "verify", "--tenant", "acme"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("BROKEN"), "{out}");
    assert!(
        out.contains(&format!("record 2 ({}): it was changed", ids[1])),
        "{out}"
    );
    assert!(out.contains("record 4") && out.contains("missing"), "{out}");
    assert!(err.contains("error: the audit trail is broken"), "{err}");
}

#[tokio::test]
async fn automation_changes_are_audited_with_who_and_through_what() {
    let app = people().await;
    let created = crate::automations_api::created_by(
        &app,
        "alice",
        crate::automations_api::hourly("Sales digest"),
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let path = format!("/v1/automations/{id}");
    let (status, _) = as_user(
        &app,
        "alice",
        "PATCH",
        &path,
        Some(json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = as_user(&app, "carol", "DELETE", &path, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, trail) = as_user(&app, "carol", "GET", "/v1/audit", None).await;
    let records = trail["records"].as_array().unwrap();
    let of = |stage: &str| {
        records
            .iter()
            .find(|r| r["stage"] == stage)
            .unwrap_or_else(|| panic!("no {stage}: {trail}"))
            .clone()
    };
    let made = of("automation_created");
    assert_eq!(made["actor"], "alice");
    assert_eq!(made["detail"]["automation_id"], id.as_str());
    assert_eq!(made["detail"]["via"], "http");
    let paused = of("automation_changed");
    assert_eq!(paused["detail"]["changed"], json!(["enabled"]));
    assert_eq!(paused["detail"]["enabled"], false);
    let deleted = of("automation_deleted");
    assert_eq!(deleted["actor"], "carol");
    assert_eq!(deleted["detail"]["title"], "Sales digest");
}
