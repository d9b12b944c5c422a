//! Links that work once: of two uses racing on one link exactly one spends it; a spent link can
//! be given back, and old ones forgotten.

use std::sync::Arc;

use workmate_protocol::TenantId;

backend_matrix! {
    async fn a_link_is_spent_once_given_back_and_forgotten(ctx: Ctx) {
        let store = ctx.store.clone();
        let tenant = TenantId::from(format!("acme-{}", uuid::Uuid::now_v7().simple()));
        let links = store.spent_links();
        assert!(!links.is_spent(&tenant, "l1").await.unwrap());
        // Eight uses race on one link: one wins.
        let store = Arc::new(store);
        let mut racing = Vec::new();
        for _ in 0..8 {
            let store = Arc::clone(&store);
            let tenant = tenant.clone();
            racing.push(tokio::spawn(async move {
                store.spent_links().spend(&tenant, "l1", "connect").await.unwrap()
            }));
        }
        let mut won = 0;
        for race in racing {
            won += usize::from(race.await.unwrap());
        }
        assert_eq!(won, 1);
        let links = store.spent_links();
        assert!(links.is_spent(&tenant, "l1").await.unwrap());
        assert_eq!(links.spent_for(&tenant, "l1").await.unwrap().as_deref(), Some("connect"));
        // Another tenant's link of the same id is its own.
        let other = TenantId::from(format!("globex-{}", uuid::Uuid::now_v7().simple()));
        assert!(links.spend(&other, "l1", "connect").await.unwrap());
        links.restore(&tenant, "l1").await.unwrap();
        assert!(!links.is_spent(&tenant, "l1").await.unwrap());
        assert!(links.spend(&tenant, "l1", "connect").await.unwrap());
        assert_eq!(links.forget_before(&tenant, i64::MAX).await.unwrap(), 1);
        assert!(!links.is_spent(&tenant, "l1").await.unwrap());
        assert!(links.is_spent(&other, "l1").await.unwrap());
    }
}
