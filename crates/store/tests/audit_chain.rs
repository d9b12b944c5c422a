//! The audit trail's hash chain on every backend: records are sealed in order per tenant, a
//! verified chain holds, and an edited, a deleted and a removed newest record each show.

use sqlx::{AnyConnection, Connection};
use workmate_protocol::TenantId;
use workmate_store::{AuditQuery, NewAuditRecord, Store};

async fn append(store: &Store, tenant: &TenantId, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let record = NewAuditRecord {
            actor: Some(format!("u{i}")),
            stage: "tool_finished".into(),
            tool: Some("run_shell".into()),
            status: Some("ok".into()),
            detail: serde_json::json!({"n": i, "command": "echo hi"}),
            ..NewAuditRecord::default()
        };
        ids.push(store.audit().append(tenant, &record).await.unwrap().id);
    }
    ids
}

async fn exec(url: &str, sql: String) {
    let mut conn = AnyConnection::connect(url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
}

backend_matrix! {
    async fn records_are_sealed_in_order_and_every_tampering_shows(ctx: Ctx) {
        let (a, b) = (TenantId::from("chain-a"), TenantId::from("chain-b"));
        let audit = ctx.store.audit();
        let ids = append(&ctx.store, &a, 5).await;
        append(&ctx.store, &b, 2).await;
        let unsealed = audit.verify(&a).await.unwrap();
        assert_eq!((unsealed.records, unsealed.unsealed), (0, 5));
        assert_eq!(audit.seal(3).await.unwrap(), 5, "3 of a's and both of b's");
        assert_eq!(audit.seal(100).await.unwrap(), 2);
        assert_eq!(audit.seal(100).await.unwrap(), 0);
        let report = audit.verify(&a).await.unwrap();
        assert!(report.is_intact(), "{report:?}");
        assert_eq!((report.records, report.head_seq, report.unsealed), (5, 5, 0));
        assert!(audit.verify(&b).await.unwrap().is_intact());
        // Each record names the one before it, in id order.
        let sealed = audit.sealed_after(&a, 0, 0, i64::MAX, 100).await.unwrap();
        let seqs: Vec<i64> = sealed.iter().map(|r| r.seq.unwrap()).collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
        assert_eq!(sealed.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), ids);
        assert_eq!(sealed[0].prev_hash.as_deref(), Some(workmate_store::GENESIS));
        assert_eq!(sealed[1].prev_hash, sealed[0].hash);
        // The list filters.
        let query = AuditQuery { actor: Some("u2".into()), ..AuditQuery::default() };
        let listed = audit.list(&a, &query, 10).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, ids[2]);

        // An edited record.
        exec(&ctx.url, format!(
            "UPDATE audit_events SET body_json = '{{\"n\": 1, \"command\": \"true\"}}' WHERE audit_id = '{}'", ids[1])).await;
        let report = audit.verify(&a).await.unwrap();
        assert_eq!(report.breaks.len(), 1, "{report:?}");
        assert_eq!(report.breaks[0].seq, 2);
        assert!(report.breaks[0].reason.contains("changed"), "{report:?}");
        // A deleted record in the middle.
        exec(&ctx.url, format!("DELETE FROM audit_events WHERE audit_id = '{}'", ids[3])).await;
        let report = audit.verify(&a).await.unwrap();
        assert!(report.breaks.iter().any(|b| b.seq == 5 && b.reason.contains("missing")), "{report:?}");
        // The newest record removed.
        exec(&ctx.url, format!("DELETE FROM audit_events WHERE audit_id = '{}'", ids[4])).await;
        let report = audit.verify(&a).await.unwrap();
        assert!(report.breaks.iter().any(|b| b.audit_id.is_empty() && b.reason.contains("head")), "{report:?}");
        // The other tenant's chain is untouched.
        assert!(audit.verify(&b).await.unwrap().is_intact());
        // Later records go on from the head.
        append(&ctx.store, &b, 1).await;
        audit.seal(10).await.unwrap();
        let report = audit.verify(&b).await.unwrap();
        assert!(report.is_intact() && report.head_seq == 3, "{report:?}");
    }
}
