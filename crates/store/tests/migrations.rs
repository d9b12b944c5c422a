//! Migrations apply once and then change nothing.

use workmate_store::Store;

backend_matrix! {
    async fn migrating_twice_changes_nothing(ctx: Ctx) {
        // `run` already migrated once; a second and third run find everything in place.
        let again = ctx.store.migrate().await.unwrap();
        assert!(again.applied.is_empty(), "{again:?}");
        assert!(again.already_applied >= 1);
        assert!(ctx.store.pending_migrations().await.unwrap().is_empty());

        // A new connection (a second replica) sees the same.
        let other = Store::connect(&ctx.url, Default::default()).await.unwrap();
        let third = other.migrate().await.unwrap();
        assert!(third.applied.is_empty(), "{third:?}");
        other.close().await;
    }

    async fn ping_answers(ctx: Ctx) {
        ctx.store.ping().await.unwrap();
    }
}
