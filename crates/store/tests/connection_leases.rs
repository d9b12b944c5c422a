//! Long-connection leases: one holder at a time, renewals keep the token, a lapsed or released
//! lease is taken over with a new token.

use workmate_store::ConnectionLease;

backend_matrix! {
    async fn a_connection_lease_has_one_holder_until_it_lapses_or_is_released(ctx: Ctx) {
        let leases = ctx.store.connection_leases();
        let name = format!("feishu:cli_{}", uuid::Uuid::now_v7().simple());
        let now = ctx.store.clock_ms();

        assert_eq!(leases.get(&name).await.unwrap(), None, "nobody took it yet");
        let a = leases.take(&name, "replica-a", now + 15_000).await.unwrap().expect("a free lease is taken");
        assert_eq!(leases.take(&name, "replica-b", now + 15_000).await.unwrap(), None, "a's lease is live");
        assert_eq!(leases.take(&name, "replica-a", now + 30_000).await.unwrap(), Some(a), "renewing keeps the token");
        assert_eq!(
            leases.get(&name).await.unwrap(),
            Some(ConnectionLease { holder: "replica-a".into(), token: a, until_ms: now + 30_000 })
        );

        // a stops renewing (it died): b takes over once the lease has lapsed, with a new token.
        ctx.clock.advance_ms(30_001);
        let b = leases.take(&name, "replica-b", ctx.store.clock_ms() + 15_000).await.unwrap().expect("a lapsed lease is taken over");
        assert!(b > a, "the token grows with a new holder");
        assert_eq!(leases.take(&name, "replica-a", ctx.store.clock_ms() + 15_000).await.unwrap(), None, "a lost it");

        // b shuts down and hands it over at once.
        leases.release(&name, "replica-b").await.unwrap();
        leases.release(&name, "replica-a").await.unwrap(); // not the holder: changes nothing
        let again = leases.take(&name, "replica-a", ctx.store.clock_ms() + 15_000).await.unwrap().expect("a released lease is free");
        assert!(again > b);

        let other = format!("{name}-other");
        assert!(leases.take(&other, "replica-b", ctx.store.clock_ms() + 15_000).await.unwrap().is_some(), "names are independent");
    }
}

backend_matrix! {
    async fn lease_names_that_differ_only_in_case_are_two_leases(ctx: Ctx) {
        // Platform app ids are case-sensitive (a Slack app `A1b` is not `A1B`): on a MySQL-family
        // database whose default collation ignores case, they must still be two leases.
        let leases = ctx.store.connection_leases();
        let name = format!("slack:Ab{}", uuid::Uuid::now_v7().simple());
        let until = ctx.store.clock_ms() + 15_000;
        assert!(leases.take(&name, "replica-a", until).await.unwrap().is_some());
        let other = name.to_uppercase();
        assert!(
            leases.take(&other, "replica-b", until).await.unwrap().is_some(),
            "{other} is another app's lease"
        );
        assert_eq!(leases.get(&name).await.unwrap().unwrap().holder, "replica-a");
        assert_eq!(leases.get(&other).await.unwrap().unwrap().holder, "replica-b");
    }
}
