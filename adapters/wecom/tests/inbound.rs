//! Typed decoding of realistic smart-robot JSON and self-built-app XML of every shape workmate
//! reads (written from WeCom's documented field lists), the defensive readings, clear errors for
//! what is not a callback, and no panic on any input.

use proptest::prelude::*;
use workmate_wecom::inbound::{
    AppCallback, AppEventKind, CardEvent, Chat, Media, MixedItem, Quote, RobotCallback,
    RobotContent, RobotEventKind, RobotFeedback, RobotMessage, Selection, decode_app, decode_robot,
};

fn message(json: &str) -> RobotMessage {
    match decode_robot(json) {
        Ok(RobotCallback::Message(message)) => *message,
        other => panic!("not a message: {other:?}"),
    }
}

fn event_kind(json: &str) -> RobotEventKind {
    match decode_robot(json) {
        Ok(RobotCallback::Event(event)) => event.kind,
        other => panic!("not an event: {other:?}"),
    }
}

const GROUP_TEXT: &str = r#"{"msgid":"CAIQ16HMjQYY\/NGagIOAgAMgq4KM0AI=","aibotid":"AIBOTID","chatid":"CHATID","chattype":"group","from":{"userid":"zhangsan"},"response_url":"https://qyapi.weixin.qq.com/cgi-bin/aibot/response?response_code=RESPONSECODE","msgtype":"text","text":{"content":"@RobotA 帮我看看这个报错 👀"},"quote":{"msgtype":"text","text":{"content":"panic: index out of range"}}}"#;

#[test]
fn a_group_text_with_a_quote() {
    let m = message(GROUP_TEXT);
    assert_eq!(m.msgid, "CAIQ16HMjQYY/NGagIOAgAMgq4KM0AI=");
    assert_eq!(m.aibotid, "AIBOTID");
    assert_eq!(
        m.chat,
        Chat::Group {
            chatid: "CHATID".into()
        }
    );
    assert_eq!(m.from.userid, "zhangsan");
    assert_eq!(m.from.corpid, None);
    assert!(m.response_url.unwrap().contains("response_code="));
    assert_eq!(
        m.content,
        RobotContent::Text("@RobotA 帮我看看这个报错 👀".into())
    );
    assert_eq!(
        m.quote,
        Some(Quote {
            msgtype: "text".into(),
            text: Some("panic: index out of range".into())
        })
    );
}

#[test]
fn a_single_text_from_another_corp() {
    let m = message(
        r#"{"msgid":"m2","aibotid":"b","chattype":"single","from":{"userid":"wmEXT","corpid":"wwOTHER"},"msgtype":"text","text":{"content":"hello"},"create_time":1700000000}"#,
    );
    assert_eq!(m.chat, Chat::Single);
    assert_eq!(m.from.corpid.as_deref(), Some("wwOTHER"));
    assert_eq!(m.create_time, Some(1_700_000_000));
    assert_eq!(m.quote, None);
}

#[test]
fn mixed_image_voice_file_and_video_messages() {
    let m = message(
        r#"{"msgid":"m3","aibotid":"b","chatid":"C","chattype":"group","from":{"userid":"u"},"msgtype":"mixed","mixed":{"msg_item":[{"msgtype":"text","text":{"content":"@RobotA 这两张图"}},{"msgtype":"image","image":{"url":"https://x/1","aeskey":"K1"}},{"msgtype":"text","text":{"content":"哪张好?"}},{"msgtype":"emotion"}]}}"#,
    );
    assert_eq!(
        m.content,
        RobotContent::Mixed(vec![
            MixedItem::Text("@RobotA 这两张图".into()),
            MixedItem::Image(Media {
                url: Some("https://x/1".into()),
                aeskey: Some("K1".into())
            }),
            MixedItem::Text("哪张好?".into()),
            MixedItem::Other("emotion".into()),
        ])
    );
    assert_eq!(
        m.content.text().as_deref(),
        Some("@RobotA 这两张图\n哪张好?")
    );

    let image = message(
        r#"{"msgid":"m4","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"image","image":{"url":"https://x/2"}}"#,
    );
    let expected = Media {
        url: Some("https://x/2".into()),
        aeskey: None,
    };
    assert_eq!(image.content, RobotContent::Image(expected.clone()));
    assert_eq!(image.content.text(), None);

    let voice = message(
        r#"{"msgid":"m5","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"voice","voice":{"content":"明天几点开会"}}"#,
    );
    assert_eq!(voice.content.text().as_deref(), Some("明天几点开会"));

    for kind in ["file", "video"] {
        let m = message(&format!(
            r#"{{"msgid":"m6","aibotid":"b","chattype":"single","from":{{"userid":"u"}},"msgtype":"{kind}","{kind}":{{"url":"https://x/2"}}}}"#
        ));
        let content = if kind == "file" {
            RobotContent::File(expected.clone())
        } else {
            RobotContent::Video(expected.clone())
        };
        assert_eq!(m.content, content);
        assert_eq!(m.content.text(), None);
    }

    let other = message(
        r#"{"msgid":"m7","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"location","location":{}}"#,
    );
    assert_eq!(other.content, RobotContent::Other("location".into()));
}

#[test]
fn a_stream_refresh() {
    let refresh = decode_robot(
        r#"{"msgid":"r1","aibotid":"b","chatid":"C","chattype":"group","from":{"userid":"u"},"msgtype":"stream","stream":{"id":"STREAMID"}}"#,
    );
    let Ok(RobotCallback::StreamRefresh(refresh)) = refresh else {
        panic!("{refresh:?}");
    };
    assert_eq!(refresh.stream_id, "STREAMID");
    assert_eq!(refresh.chat, Chat::Group { chatid: "C".into() });
}

#[test]
fn enter_chat_feedback_disconnected_and_other_events() {
    let enter = r#"{"msgid":"e1","create_time":1700000000,"aibotid":"b","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"enter_chat","enter_chat":{}}}"#;
    assert_eq!(event_kind(enter), RobotEventKind::EnterChat);
    let Ok(RobotCallback::Event(event)) = decode_robot(enter) else {
        panic!()
    };
    assert_eq!(
        (event.msgid.as_str(), event.from.userid.as_str()),
        ("e1", "u")
    );
    assert_eq!(event.chat, Some(Chat::Single));

    let feedback = r#"{"msgid":"e2","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"feedback_event","feedback_event":{"id":"FB1","type":2,"content":"答非所问","inaccurate_reason_list":[2,4]}}}"#;
    assert_eq!(
        event_kind(feedback),
        RobotEventKind::Feedback(RobotFeedback {
            id: "FB1".into(),
            kind: Some(2),
            content: Some("答非所问".into())
        })
    );

    let gone = r#"{"msgid":"e3","create_time":1700000000,"aibotid":"b","msgtype":"event","event":{"eventtype":"disconnected_event","disconnected_event":{}}}"#;
    assert_eq!(event_kind(gone), RobotEventKind::Disconnected);

    let future = r#"{"msgid":"e4","aibotid":"b","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"share_event","share_event":{"x":[1,{"y":null}]}}}"#;
    assert_eq!(
        event_kind(future),
        RobotEventKind::Other("share_event".into())
    );
    // Even an event whose contents are not objects at all is acknowledged, not refused.
    let odd = r#"{"msgid":"e5","aibotid":"b","from":"u","msgtype":"event","event":["?"]}"#;
    assert_eq!(event_kind(odd), RobotEventKind::Other(String::new()));
}

#[test]
fn template_card_clicks_in_every_casing() {
    let snake = r#"{"msgid":"c1","create_time":1700000000,"aibotid":"b","chatid":"C","chattype":"group","from":{"userid":"lisi"},"response_url":"https://x","msgtype":"event","event":{"eventtype":"template_card_event","template_card_event":{"card_type":"button_interaction","event_key":"{\"type\":\"stop\"}","task_id":"wm_task_1","selected_items":{"selected_item":[{"question_key":"q1","option_ids":{"option_id":["o1","o2"]}}]}}}}"#;
    let expected = CardEvent {
        card_type: "button_interaction".into(),
        event_key: r#"{"type":"stop"}"#.into(),
        task_id: "wm_task_1".into(),
        response_code: None,
        selected: vec![Selection {
            question_key: "q1".into(),
            option_ids: vec!["o1".into(), "o2".into()],
        }],
    };
    assert_eq!(
        event_kind(snake),
        RobotEventKind::TemplateCard(expected.clone())
    );

    let pascal = r#"{"msgid":"c2","aibotid":"b","chattype":"single","from":{"userid":"lisi"},"msgtype":"event","event":{"eventtype":"template_card_event","template_card_event":{"CardType":"button_interaction","EventKey":"{\"type\":\"stop\"}","TaskId":"wm_task_1","SelectedItems":{"SelectedItem":{"QuestionKey":"q1","OptionIds":{"OptionId":"o1"}}}}}}"#;
    let mut single_option = expected;
    single_option.selected[0].option_ids = vec!["o1".into()];
    assert_eq!(
        event_kind(pascal),
        RobotEventKind::TemplateCard(single_option)
    );

    // An older flat shape: the fields on the event itself.
    let flat = r#"{"msgid":"c3","aibotid":"b","chattype":"single","from":{"userid":"lisi"},"msgtype":"event","event":{"eventtype":"template_card_event","event_key":"k","task_id":"t","card_type":"button_interaction"}}"#;
    let RobotEventKind::TemplateCard(card) = event_kind(flat) else {
        panic!()
    };
    assert_eq!((card.event_key.as_str(), card.task_id.as_str()), ("k", "t"));
    assert!(card.selected.is_empty());
}

#[test]
fn ids_and_times_may_be_numbers_or_strings() {
    let m = message(
        r#"{"msgid":12345,"aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"text","text":{"content":"x"},"create_time":"1700000000"}"#,
    );
    assert_eq!(m.msgid, "12345");
    assert_eq!(m.create_time, Some(1_700_000_000));
    // Without chattype, a chatid means a group.
    let m = message(
        r#"{"msgid":"m","aibotid":"b","chatid":"C","from":{"userid":"u"},"msgtype":"text","text":{"content":"x"}}"#,
    );
    assert_eq!(m.chat, Chat::Group { chatid: "C".into() });
}

#[test]
fn robot_bodies_that_are_not_callbacks_say_what_is_missing() {
    for (json, says) in [
        ("not json", "not its JSON"),
        ("[1,2]", "not its JSON"),
        (r#"{"msgid":"m"}"#, "without msgtype"),
        (
            r#"{"aibotid":"b","from":{"userid":"u"},"msgtype":"text","text":{"content":"x"}}"#,
            "without msgid",
        ),
        (
            r#"{"msgid":"m","msgtype":"text","text":{"content":"x"}}"#,
            "without from.userid",
        ),
        (
            r#"{"msgid":"m","chattype":"group","from":{"userid":"u"},"msgtype":"text"}"#,
            "without chatid",
        ),
        (
            r#"{"msgid":"m","from":{"userid":"u"},"msgtype":"stream","stream":{}}"#,
            "without stream.id",
        ),
    ] {
        let error = decode_robot(json).unwrap_err();
        assert!(error.to_string().contains(says), "{json}: {error}");
    }
}

const APP_TEXT: &str = "<xml><ToUserName><![CDATA[ww78369002d0f7bb09]]></ToUserName><FromUserName><![CDATA[zhangsan]]></FromUserName><CreateTime>1729132182</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[明天上午十点开会]]></Content><MsgId>6102533897871470703</MsgId><AgentID>1000003</AgentID></xml>";

#[test]
fn an_app_text_message() {
    let Ok(AppCallback::Text(text)) = decode_app(APP_TEXT) else {
        panic!()
    };
    assert_eq!(text.meta.to_user, "ww78369002d0f7bb09");
    assert_eq!(text.meta.from_user, "zhangsan");
    assert_eq!(text.meta.create_time, "1729132182");
    assert_eq!(text.meta.agent_id.as_deref(), Some("1000003"));
    assert_eq!(text.msg_id.as_deref(), Some("6102533897871470703"));
    assert_eq!(text.content, "明天上午十点开会");
}

#[test]
fn app_text_reads_cdata_entities_and_skips_what_it_does_not_know() {
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- sent by a proxy -->\n<xml>\n  <ToUserName>ww1</ToUserName>\n  <FromUserName>u&amp;1</FromUserName>\n  <CreateTime>1</CreateTime>\n  <MsgType>text</MsgType>\n  <Content>if a &lt; b &amp;&amp; c &gt; d: &#x4e2d;&#25991; <![CDATA[<raw> & ]]]]><![CDATA[>]]></Content>\n  <ScanCodeInfo><ScanType>qrcode</ScanType><ScanResult>x</ScanResult></ScanCodeInfo>\n  <MsgId>1</MsgId>\n</xml>";
    let Ok(AppCallback::Text(text)) = decode_app(xml) else {
        panic!("{:?}", decode_app(xml))
    };
    assert_eq!(text.meta.from_user, "u&1");
    assert_eq!(text.content, "if a < b && c > d: 中文 <raw> & ]]>");
    assert_eq!(text.meta.agent_id, None);
}

#[test]
fn app_card_clicks_menu_clicks_and_other_events() {
    let card = "<xml><ToUserName><![CDATA[ww1]]></ToUserName><FromUserName><![CDATA[lisi]]></FromUserName><CreateTime>1700000000</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[template_card_event]]></Event><EventKey><![CDATA[{\"type\":\"stop\"}]]></EventKey><TaskId><![CDATA[wm_task_1]]></TaskId><CardType><![CDATA[vote_interaction]]></CardType><ResponseCode><![CDATA[RC1]]></ResponseCode><AgentID>1000002</AgentID><SelectedItems><SelectedItem><QuestionKey><![CDATA[q1]]></QuestionKey><OptionIds><OptionId><![CDATA[o1]]></OptionId><OptionId><![CDATA[o2]]></OptionId></OptionIds></SelectedItem><SelectedItem><QuestionKey><![CDATA[q2]]></QuestionKey><OptionIds><OptionId><![CDATA[o3]]></OptionId></OptionIds></SelectedItem></SelectedItems></xml>";
    let Ok(AppCallback::Event(event)) = decode_app(card) else {
        panic!("{:?}", decode_app(card))
    };
    assert_eq!(event.meta.from_user, "lisi");
    assert_eq!(
        event.kind,
        AppEventKind::TemplateCard(CardEvent {
            card_type: "vote_interaction".into(),
            event_key: r#"{"type":"stop"}"#.into(),
            task_id: "wm_task_1".into(),
            response_code: Some("RC1".into()),
            selected: vec![
                Selection {
                    question_key: "q1".into(),
                    option_ids: vec!["o1".into(), "o2".into()]
                },
                Selection {
                    question_key: "q2".into(),
                    option_ids: vec!["o3".into()]
                },
            ],
        })
    );

    let app_event = |event: &str, key: &str| {
        format!(
            "<xml><ToUserName>ww1</ToUserName><FromUserName>lisi</FromUserName><CreateTime>1</CreateTime><MsgType>event</MsgType><Event>{event}</Event><EventKey>{key}</EventKey><AgentID>2</AgentID></xml>"
        )
    };
    let kind = |xml: String| match decode_app(&xml) {
        Ok(AppCallback::Event(event)) => event.kind,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        kind(app_event("click", "workmate_stop")),
        AppEventKind::Click {
            event_key: "workmate_stop".into()
        }
    );
    assert_eq!(kind(app_event("enter_agent", "")), AppEventKind::EnterAgent);
    assert_eq!(
        kind(app_event("template_card_menu_event", "x")),
        AppEventKind::Other("template_card_menu_event".into())
    );
    assert_eq!(
        kind(app_event("LOCATION", "")),
        AppEventKind::Other("LOCATION".into())
    );
}

#[test]
fn other_app_messages_are_kept_apart() {
    let xml = "<xml><ToUserName>ww1</ToUserName><FromUserName>u</FromUserName><CreateTime>1</CreateTime><MsgType>image</MsgType><PicUrl>https://x</PicUrl><MediaId>M</MediaId><MsgId>9</MsgId><AgentID>2</AgentID></xml>";
    let Ok(AppCallback::Other(other)) = decode_app(xml) else {
        panic!()
    };
    assert_eq!(
        (other.msg_type.as_str(), other.msg_id.as_deref()),
        ("image", Some("9"))
    );
}

#[test]
fn app_bodies_that_are_not_callbacks_say_what_is_wrong() {
    for (xml, says) in [
        ("", "not its XML"),
        ("<xml><MsgType>text</MsgType>", "not its XML"),
        ("<xml><Content>&bogus;</Content></xml>", "not its XML"),
        ("<xml><MsgType>text</MsgType></xml>", "without FromUserName"),
        (
            "<xml><FromUserName> </FromUserName><MsgType>text</MsgType></xml>",
            "without FromUserName",
        ),
        (
            "<xml><FromUserName>u</FromUserName></xml>",
            "without MsgType",
        ),
        (
            "<xml><FromUserName>u</FromUserName><FromUserName>v</FromUserName><MsgType>text</MsgType></xml>",
            "duplicate",
        ),
    ] {
        let error = decode_app(xml).unwrap_err();
        assert!(error.to_string().contains(says), "{xml}: {error}");
    }
}

proptest! {
    #[test]
    fn no_text_panics_the_decoders(text in any::<String>()) {
        let _ = decode_robot(&text);
        let _ = decode_app(&text);
    }

    #[test]
    fn no_damage_to_a_real_callback_panics_the_decoders(
        at in 0usize..2000,
        cut in 0usize..40,
        insert in "[<>&;\\[\\]{}\":,\\\\a-zA-Z0-9]{0,6}",
    ) {
        for sample in [GROUP_TEXT, APP_TEXT] {
            let mut text: Vec<char> = sample.chars().collect();
            let at = at % (text.len() + 1);
            let end = (at + cut).min(text.len());
            text.splice(at..end, insert.chars());
            let text: String = text.into_iter().collect();
            let _ = decode_robot(&text);
            let _ = decode_app(&text);
        }
    }
}
