//! Property tests of score packing: exact, order-preserving, and refusing what does not fit.

use leaguekit::season::packing::{EXACT_LIMIT, Packing, ScoreMode};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn packing() -> impl Strategy<Value = Packing> {
    // Any period length from 1 tick to a 31-day month in milliseconds, and any
    // max_score up to the largest that fits it.
    (1u64..=31 * 24 * 3600 * 1000).prop_flat_map(|ticks| {
        let largest = Packing::largest_max_score(ticks).expect("fits");
        (Just(ticks), 0..=largest).prop_map(|(ticks, max)| Packing::new(max, ticks).expect("fits"))
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn round_trip_is_exact(p in packing(), s in any::<u64>(), t in any::<u64>()) {
        let s = s % (p.max_score() + 1);
        let t = t % p.ticks();
        let packed = p.pack(s, t).expect("in range");
        prop_assert!(packed <= EXACT_LIMIT);
        // The value survives the trip through an IEEE double, as Redis stores it.
        prop_assert_eq!(packed as f64 as u64, packed);
        prop_assert_eq!(format!("{}", packed as f64).parse::<f64>().expect("float") as u64, packed);
        prop_assert_eq!(p.unpack(packed), (s, Some(t)));
    }

    #[test]
    fn order_is_score_then_time(p in packing(), a in any::<(u64, u64)>(), b in any::<(u64, u64)>()) {
        let (sa, ta) = (a.0 % (p.max_score() + 1), a.1 % p.ticks());
        let (sb, tb) = (b.0 % (p.max_score() + 1), b.1 % p.ticks());
        let (pa, pb) = (p.pack(sa, ta).expect("a"), p.pack(sb, tb).expect("b"));
        let expected = sa.cmp(&sb).then(tb.cmp(&ta));
        prop_assert_eq!(pa.cmp(&pb), expected);
        // Idle entries sort below every entry of the same score that has a time.
        prop_assert!(sa * p.span() < pa || p.unpack(pa).1.is_none());
    }

    #[test]
    fn too_large_is_refused(ticks in 1u64..=1u64 << 40, extra in 1u64..1000) {
        let largest = Packing::largest_max_score(ticks).expect("fits");
        let err = Packing::new(largest + extra, ticks).expect_err("must refuse");
        prop_assert_eq!(err.largest, largest);
        prop_assert!((largest + 1) as u128 * (ticks + 1) as u128 <= EXACT_LIMIT as u128);
        prop_assert!((largest + 2) as u128 * (ticks + 1) as u128 > EXACT_LIMIT as u128);
    }

    #[test]
    fn apply_matches_model(
        p in packing(),
        ops in proptest::collection::vec((0u8..3, -2000i64..2000, any::<u64>()), 1..40),
    ) {
        let mut packed: Option<u64> = None;
        let mut model: i128 = 0;
        for (mode, value, tick) in ops {
            let mode = [ScoreMode::Increment, ScoreMode::Best, ScoreMode::Set][mode as usize];
            let tick = tick % p.ticks();
            let want = match mode {
                ScoreMode::Increment => model + value as i128,
                ScoreMode::Best if value >= 0 => model.max(value as i128),
                _ => value as i128,
            };
            match p.apply(mode, packed, value, tick) {
                Ok(new) => {
                    prop_assert!(want >= 0 && want <= p.max_score() as i128);
                    prop_assert_eq!(p.unpack(new).0 as i128, want);
                    model = want;
                    packed = Some(new);
                }
                Err(_) => prop_assert!(want < 0 || want > p.max_score() as i128),
            }
        }
    }
}
