//! WeCom callbacks as neutral deliveries: group and single chats, mentions, card clicks (and the
//! keys that are not workmate's), menu commands, what is not a delivery, and delivery ids that
//! repeat exactly when WeCom redelivers.

use workmate_adapter::{Inbound, InboundKind, InboundUser};
use workmate_cards::ButtonAction;
use workmate_protocol::{ApprovalChoice, Resolution, Surface};
use workmate_wecom::inbound::{decode_app, decode_robot};
use workmate_wecom::mapping::{app_inbound, button_action, robot_inbound};

const CORP: &str = "ww78369002d0f7bb09";

fn robot(json: &str, bot_name: Option<&str>) -> Option<Inbound> {
    robot_inbound(&decode_robot(json).unwrap(), CORP, bot_name)
}

fn app(xml: &str) -> Option<Inbound> {
    app_inbound(&decode_app(xml).unwrap(), CORP)
}

fn robot_text(chat: &str, content: &str) -> String {
    let content = serde_json::to_string(content).unwrap();
    format!(
        r#"{{"msgid":"MSG1","aibotid":"b",{chat},"from":{{"userid":"zhangsan"}},"msgtype":"text","text":{{"content":{content}}}}}"#
    )
}

const GROUP: &str = r#""chatid":"CHATID","chattype":"group""#;
const SINGLE: &str = r#""chattype":"single""#;

fn approve() -> ButtonAction {
    ButtonAction::Resolve {
        item_id: "ib_1".into(),
        resolution: Resolution::Approval {
            choice: ApprovalChoice::Once,
        },
    }
}

/// A button key as the card renderer writes it: the action as compact JSON.
fn key(action: &ButtonAction) -> String {
    serde_json::to_string(action).unwrap()
}

fn robot_click(chat: &str, event_key: &str, msgid: &str) -> String {
    let event_key = serde_json::to_string(event_key).unwrap();
    format!(
        r#"{{"msgid":"{msgid}","create_time":1700000000,"aibotid":"b",{chat},"from":{{"userid":"lisi"}},"msgtype":"event","event":{{"eventtype":"template_card_event","template_card_event":{{"card_type":"button_interaction","event_key":{event_key},"task_id":"wm_task_1"}}}}}}"#
    )
}

fn app_event(event: &str, fields: &str, create_time: u64) -> String {
    format!(
        "<xml><ToUserName><![CDATA[{CORP}]]></ToUserName><FromUserName><![CDATA[lisi]]></FromUserName><CreateTime>{create_time}</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[{event}]]></Event>{fields}<AgentID>1000002</AgentID></xml>"
    )
}

fn app_card(event_key: &str, task_id: &str, create_time: u64) -> String {
    app_event(
        "template_card_event",
        &format!(
            "<EventKey><![CDATA[{event_key}]]></EventKey><TaskId><![CDATA[{task_id}]]></TaskId><CardType><![CDATA[button_interaction]]></CardType><ResponseCode><![CDATA[RC]]></ResponseCode>"
        ),
        create_time,
    )
}

#[test]
fn a_group_mention_is_a_message_in_the_group_without_the_mention() {
    let inbound = robot(&robot_text(GROUP, "@机器人 部署一下 staging"), None).unwrap();
    assert_eq!(
        inbound,
        Inbound {
            surface: Surface::Wecom,
            tenant_key: CORP.into(),
            delivery_id: "MSG1".into(),
            user: InboundUser {
                id: "zhangsan".into(),
                name: None
            },
            chat_id: "CHATID".into(),
            thread_id: None,
            direct: false,
            reply: None,
            message_ref: None,
            kind: InboundKind::Message {
                text: "部署一下 staging".into(),
                files: Vec::new(),
            },
        }
    );
    // A name with a space is removed whole when it is known.
    let named = robot(&robot_text(GROUP, "@Work Mate 部署"), Some("Work Mate")).unwrap();
    assert_eq!(
        named.kind,
        InboundKind::Message {
            text: "部署".into(),
            files: Vec::new(),
        }
    );
    // Other people's mentions after the robot's stay.
    let others = robot(&robot_text(GROUP, "@bot @lisi 看一下"), None).unwrap();
    assert_eq!(
        others.kind,
        InboundKind::Message {
            text: "@lisi 看一下".into(),
            files: Vec::new(),
        }
    );
}

#[test]
fn a_single_chat_is_direct_and_keeps_its_text() {
    let inbound = robot(&robot_text(SINGLE, " @lisi 在吗 "), None).unwrap();
    assert_eq!(inbound.chat_id, "zhangsan");
    assert!(inbound.direct);
    assert_eq!(inbound.thread_id, None);
    assert_eq!(
        inbound.kind,
        InboundKind::Message {
            text: "@lisi 在吗".into(),
            files: Vec::new(),
        }
    );
}

#[test]
fn the_tenant_is_the_configured_corp_even_for_another_corps_user() {
    let json = r#"{"msgid":"m","aibotid":"b","chattype":"single","from":{"userid":"wmEXT","corpid":"wwOTHER"},"msgtype":"text","text":{"content":"hi"}}"#;
    let inbound = robot(json, None).unwrap();
    assert_eq!(inbound.tenant_key, CORP);
    assert_eq!(inbound.user.id, "wmEXT");
}

#[test]
fn mixed_voice_and_media_messages_carry_their_text_and_files() {
    let mixed = r#"{"msgid":"m","aibotid":"b","chatid":"C","chattype":"group","from":{"userid":"u"},"msgtype":"mixed","mixed":{"msg_item":[{"msgtype":"text","text":{"content":"@bot 看图"}},{"msgtype":"image","image":{"url":"https://x"}}]}}"#;
    let InboundKind::Message { text, files } = robot(mixed, None).unwrap().kind else {
        panic!("not a message");
    };
    assert_eq!(text, "看图");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].mime.as_deref(), Some("image/*"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&files[0].handle).unwrap(),
        serde_json::json!({"url": "https://x", "aeskey": null})
    );
    let voice = r#"{"msgid":"m","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"voice","voice":{"content":"停止"}}"#;
    assert_eq!(
        robot(voice, None).unwrap().kind,
        InboundKind::Message {
            text: "停止".into(),
            files: Vec::new(),
        }
    );
    // A bare file is a message of its file alone, with the long connection's key.
    let file = r#"{"msgid":"m","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"file","file":{"url":"https://x/f","aeskey":"k"}}"#;
    let InboundKind::Message { text, files } = robot(file, None).unwrap().kind else {
        panic!("not a message");
    };
    assert_eq!((text.as_str(), files[0].name.as_str()), ("", "file"));
    assert!(files[0].handle.contains("\"aeskey\":\"k\""));
    let other = r#"{"msgid":"m","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"location","location":{}}"#;
    assert_eq!(robot(other, None), None);
}

#[test]
fn a_robot_card_click_is_a_click_where_the_card_is() {
    let action = approve();
    let inbound = robot(&robot_click(GROUP, &key(&action), "EV1"), None).unwrap();
    assert_eq!(inbound.kind, InboundKind::Click { action });
    assert_eq!(inbound.user.id, "lisi");
    assert_eq!(inbound.chat_id, "CHATID");
    assert!(!inbound.direct);
    assert_eq!(inbound.delivery_id, "EV1");

    let stop = ButtonAction::Stop {
        session_id: "s_1".into(),
        turn_id: "tn_1".into(),
    };
    let single = robot(&robot_click(SINGLE, &key(&stop), "EV2"), None).unwrap();
    assert_eq!(single.kind, InboundKind::Click { action: stop });
    assert_eq!((single.chat_id.as_str(), single.direct), ("lisi", true));
}

#[test]
fn a_click_on_a_key_that_is_not_a_workmate_button_is_dropped() {
    for foreign in [
        "approve",
        "",
        "{\"type\":\"launch\"}",
        "{\"type\":\"stop\"}",
    ] {
        assert_eq!(
            robot(&robot_click(GROUP, foreign, "EV1"), None),
            None,
            "{foreign}"
        );
        assert_eq!(app(&app_card(foreign, "t", 1)), None, "{foreign}");
        assert_eq!(button_action(foreign), None, "{foreign}");
    }
    // The same click with a workmate key is taken.
    assert!(robot(&robot_click(GROUP, &key(&approve()), "EV1"), None).is_some());
    assert_eq!(button_action(&key(&approve())), Some(approve()));
}

#[test]
fn what_the_surface_answers_itself_is_not_a_delivery() {
    for json in [
        r#"{"msgid":"r","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"stream","stream":{"id":"S"}}"#,
        r#"{"msgid":"e","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"enter_chat"}}"#,
        r#"{"msgid":"e","aibotid":"b","chattype":"single","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"feedback_event","feedback_event":{"id":"f","type":1}}}"#,
        r#"{"msgid":"e","aibotid":"b","msgtype":"event","event":{"eventtype":"disconnected_event"}}"#,
        r#"{"msgid":"e","aibotid":"b","from":{"userid":"u"},"msgtype":"event","event":{"eventtype":"new_event"}}"#,
    ] {
        assert_eq!(robot(json, None), None, "{json}");
    }
    assert_eq!(
        app(&app_event("enter_agent", "<EventKey></EventKey>", 1)),
        None
    );
    assert_eq!(
        app(&app_event(
            "template_card_menu_event",
            "<EventKey>k</EventKey>",
            1
        )),
        None
    );
    let image = "<xml><ToUserName>ww1</ToUserName><FromUserName>u</FromUserName><CreateTime>1</CreateTime><MsgType>image</MsgType><MsgId>9</MsgId></xml>";
    assert_eq!(app(image), None);
}

#[test]
fn an_app_text_is_a_direct_message_keyed_by_its_msg_id() {
    let xml = "<xml><ToUserName><![CDATA[ww78369002d0f7bb09]]></ToUserName><FromUserName><![CDATA[zhangsan]]></FromUserName><CreateTime>1729132182</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[ 明天上午十点开会 ]]></Content><MsgId>6102533897871470703</MsgId><AgentID>1000003</AgentID></xml>";
    assert_eq!(
        app(xml).unwrap(),
        Inbound {
            surface: Surface::Wecom,
            tenant_key: CORP.into(),
            delivery_id: "6102533897871470703".into(),
            user: InboundUser {
                id: "zhangsan".into(),
                name: None
            },
            chat_id: "zhangsan".into(),
            thread_id: None,
            direct: true,
            reply: None,
            message_ref: None,
            kind: InboundKind::Message {
                text: "明天上午十点开会".into(),
                files: Vec::new(),
            },
        }
    );
}

#[test]
fn an_app_card_click_is_keyed_by_what_a_redelivery_repeats() {
    let action = approve();
    let first = app(&app_card(&key(&action), "wm_task_1", 1_700_000_000)).unwrap();
    assert_eq!(first.kind, InboundKind::Click { action });
    assert_eq!((first.chat_id.as_str(), first.direct), ("lisi", true));
    assert_eq!(
        first.delivery_id,
        "1000002:lisi:1700000000:template_card_event:wm_task_1"
    );
    let again = app(&app_card(&key(&approve()), "wm_task_1", 1_700_000_000)).unwrap();
    assert_eq!(again.delivery_id, first.delivery_id);
    let other_card = app(&app_card(&key(&approve()), "wm_task_2", 1_700_000_000)).unwrap();
    assert_ne!(other_card.delivery_id, first.delivery_id);
    let later = app(&app_card(&key(&approve()), "wm_task_1", 1_700_000_009)).unwrap();
    assert_ne!(later.delivery_id, first.delivery_id);
}

#[test]
fn an_app_menu_click_is_a_command() {
    let stop = app(&app_event(
        "click",
        "<EventKey><![CDATA[workmate_stop]]></EventKey>",
        5,
    ))
    .unwrap();
    assert_eq!(
        stop.kind,
        InboundKind::Command {
            text: "stop".into()
        }
    );
    assert_eq!(stop.delivery_id, "1000002:lisi:5:click:workmate_stop");
    assert_eq!((stop.chat_id.as_str(), stop.direct), ("lisi", true));
    let list = app(&app_event(
        "click",
        "<EventKey>automations_list</EventKey>",
        5,
    ))
    .unwrap();
    assert_eq!(
        list.kind,
        InboundKind::Command {
            text: "automations list".into()
        }
    );
}

#[test]
fn a_robot_click_without_a_msgid_gets_a_stable_id() {
    let json = robot_click(GROUP, &key(&approve()), "");
    let first = robot(&json, None).unwrap();
    assert_eq!(
        first.delivery_id,
        "b:lisi:1700000000:template_card_event:wm_task_1"
    );
    assert_eq!(robot(&json, None).unwrap().delivery_id, first.delivery_id);
}

#[test]
fn deliveries_round_trip_through_json() {
    let inbound = robot(&robot_click(GROUP, &key(&approve()), "EV1"), None).unwrap();
    let text = serde_json::to_string(&inbound).unwrap();
    assert_eq!(serde_json::from_str::<Inbound>(&text).unwrap(), inbound);
}

#[test]
fn an_image_sent_to_the_app_is_a_message_of_its_file() {
    let xml = "<xml><ToUserName>ww1</ToUserName><FromUserName>zhangsan</FromUserName><CreateTime>1</CreateTime><MsgType>image</MsgType><PicUrl>https://x</PicUrl><MediaId>MEDIA1</MediaId><MsgId>42</MsgId><AgentID>1000002</AgentID></xml>";
    let inbound = app(xml).unwrap();
    assert_eq!(inbound.delivery_id, "42");
    let InboundKind::Message { text, files } = inbound.kind else {
        panic!("not a message");
    };
    assert_eq!(text, "");
    assert_eq!(files[0].handle, "media:MEDIA1");
    let location = "<xml><ToUserName>ww1</ToUserName><FromUserName>zhangsan</FromUserName><CreateTime>1</CreateTime><MsgType>location</MsgType><MsgId>43</MsgId></xml>";
    assert_eq!(app(location), None);
}
