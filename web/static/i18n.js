// i18n.js holds every string the pages show, in English and Chinese, and
// the level chips of DESIGN.md (the same wording the server sends).

export const LANGS = ['en', 'zh'];

const strings = {
  en: {
    title: 'Poise — interview copilot',
    tagline: 'Calm, quiet help while you interview.',
    profileHeading: 'Before you start',
    profileIntro: 'A few details so suggestions fit you. They stay in this browser and this session.',
    lang: 'Language',
    seniority: 'Seniority',
    junior: 'Junior',
    mid: 'Mid-level',
    senior: 'Senior',
    role: 'Role',
    rolePlaceholder: 'e.g. Backend engineer, payments',
    resume: 'Resume summary',
    resumePlaceholder: 'A few lines: recent roles, main projects, strengths.',
    start: 'Start',
    save: 'Save',
    editProfile: 'Profile',
    resetAI: 'Reset AI',
    resetHint: 'Ask the server to try the main AI again (Alt+R)',
    shareTab: 'Share tab audio',
    useMic: 'Use microphone',
    stopAudio: 'Stop audio',
    listeningTab: 'Listening to the tab',
    listeningMic: 'Listening to the microphone',
    ask: 'Ask',
    askPlaceholder: 'Type a question and press Enter  ( / to focus )',
    captions: 'Live captions',
    captionsEmpty: 'Captions appear here when audio is on.',
    waiting: 'Suggestions appear here when a question is asked.',
    earlier: 'Earlier',
    question: 'Question',
    thinkTime: 'Take a moment',
    countdownDone: 'Start now:',
    followUps: 'You could ask',
    tips: 'Tips',
    cut: 'The answer stopped early; use what helps.',
    superseded: 'A newer question came in.',
    localCard: 'Offline coaching',
    source: 'source',
    statusConnecting: 'Connecting…',
    statusConnected: 'Connected',
    statusReconnecting: 'Reconnecting…',
    statusReconnectIn: (s) => `Reconnecting in ${s} s…`,
    statusOffline: 'Server unreachable — coaching here in the browser; reconnecting in the background',
    statusResumed: 'Reconnected; nothing was missed',
    statusNewSession: 'Reconnected with a fresh session',
    statusReplaced: 'This session was opened in another window.',
    reconnectHere: 'Use it here',
    statusAudioDenied: 'Audio was not shared; you can type questions instead.',
    statusNoTabAudio: 'No audio in the shared tab; tick “Share tab audio” when sharing.',
    statusAudioUnsupported: 'This browser cannot capture audio here; you can type questions.',
    statusAudioStopped: 'Audio stopped',
    note: 'Note',
    notices: {
      rate_limited: 'Many questions in a short time; the next one is answered in a moment.',
      too_many_sessions: 'Poise is already open in other windows; close one to continue here.',
      unauthorized: 'This session link is not valid or has expired; ask for a new one.',
    },
    shortcuts: 'Enter ask · / focus · Alt+R reset AI · Esc clear',
    limitChip: '⚡ Lite mode',
    limitHints: {
      questions_per_minute: 'Many questions in a short time: answers come from templates and coaching for a moment; the AI is back within a minute',
      audio_seconds_per_hour: "This hour's listening time is used up: captions pause, typed questions still work",
      daily_tokens_per_vendor: "Today's AI budget is used up: answers come from a lighter source until tomorrow",
    },
    opsLimit: 'Limit',
    limitNames: {
      questions_per_minute: 'questions / min',
      audio_seconds_per_hour: 'audio / hour',
      daily_tokens_per_vendor: 'daily tokens',
      sessions_per_subject: 'sessions',
    },
    opsTitle: 'Poise — operations',
    opsSessions: 'Live sessions',
    opsNoSessions: 'No live sessions.',
    opsTransitions: 'Level changes',
    opsNoTransitions: 'No level changes yet.',
    opsBackends: 'Backends',
    opsNoBackends: 'No backends reported yet.',
    opsDemo: 'Demo faults',
    opsDemoIntro: 'Inject faults into the simulated vendors; sessions follow the health checks.',
    opsClearAll: 'Clear all faults',
    faults: {
      l1_down: 'L1 vendors down',
      l2_slow: 'Local model slow',
      templates_down: 'Templates down',
      whisper_down: 'Whisper down',
    },
    on: 'on',
    off: 'off',
    opsSession: 'Session',
    opsLevel: 'Level',
    opsLang: 'Lang',
    opsSeniority: 'Seniority',
    opsConnected: 'Connected',
    opsNode: 'Node',
    opsUpdated: 'Updated',
    opsBackend: 'Backend',
    opsState: 'State',
    opsPass: 'Passes',
    opsFail: 'Fails',
    opsAt: 'At',
    opsChange: 'Change',
    opsReason: 'Reason',
    yes: 'yes',
    no: 'no',
    up: 'up',
    down: 'down',
    opsUpdatedAt: (t) => `Updated ${t}`,
    opsUnreachable: 'The ops API is not answering; retrying.',
    opsForbidden: 'The ops API needs the ops token (add #token=… to the address).',
    levelNames: {
      L1: 'Main AI',
      L2: 'Local model',
      L3: 'Templates',
      L4: 'Coach',
    },
  },
  zh: {
    title: 'Poise — 面试助手',
    tagline: '面试时安静、可靠的提示。',
    profileHeading: '开始之前',
    profileIntro: '简单填写，让提示更贴合你。信息只保存在本浏览器和本次会话中。',
    lang: '语言',
    seniority: '资历',
    junior: '初级',
    mid: '中级',
    senior: '高级',
    role: '应聘岗位',
    rolePlaceholder: '例如：后端工程师（支付方向）',
    resume: '简历摘要',
    resumePlaceholder: '几行即可：近期职位、主要项目、擅长方向。',
    start: '开始',
    save: '保存',
    editProfile: '资料',
    resetAI: '重置 AI',
    resetHint: '让服务器重新尝试主模型（Alt+R）',
    shareTab: '共享标签页音频',
    useMic: '使用麦克风',
    stopAudio: '停止音频',
    listeningTab: '正在收听标签页',
    listeningMic: '正在收听麦克风',
    ask: '提问',
    askPlaceholder: '输入问题后按回车（按 / 聚焦）',
    captions: '实时字幕',
    captionsEmpty: '开启音频后，字幕显示在这里。',
    waiting: '面试官提问后，提示会显示在这里。',
    earlier: '之前的问题',
    question: '问题',
    thinkTime: '先想一想',
    countdownDone: '现在开口：',
    followUps: '可以追问',
    tips: '提示',
    cut: '回答提前中断了，挑有用的部分参考。',
    superseded: '有新的问题进来了。',
    localCard: '离线指引',
    source: '来源',
    statusConnecting: '正在连接…',
    statusConnected: '已连接',
    statusReconnecting: '正在重新连接…',
    statusReconnectIn: (s) => `${s} 秒后重新连接…`,
    statusOffline: '暂时连不上服务器，已在浏览器内提供答题指引，后台继续重连',
    statusResumed: '已重新连接，没有遗漏内容',
    statusNewSession: '已重新连接（新会话）',
    statusReplaced: '此会话已在另一个窗口打开。',
    reconnectHere: '在这里继续',
    statusAudioDenied: '未共享音频，可以直接输入问题。',
    statusNoTabAudio: '共享的标签页没有音频，共享时请勾选“分享标签页音频”。',
    statusAudioUnsupported: '此浏览器无法在这里采集音频，可以直接输入问题。',
    statusAudioStopped: '音频已停止',
    note: '说明',
    notices: {
      rate_limited: '提问有点频繁，稍等一下再问。',
      too_many_sessions: 'Poise 已在其他窗口打开，关闭一个后可在这里继续。',
      unauthorized: '会话链接无效或已过期，请重新获取。',
    },
    shortcuts: '回车 提问 · / 聚焦 · Alt+R 重置 AI · Esc 清空',
    limitChip: '⚡ 轻量模式',
    limitHints: {
      questions_per_minute: '短时间内提问较多，暂时用模板和答题指引作答，一分钟内恢复 AI 回答',
      audio_seconds_per_hour: '本小时的收听时长已用完，字幕暂停；仍可输入问题',
      daily_tokens_per_vendor: '今日 AI 用量已达上限，明天之前改用轻量来源作答',
    },
    opsLimit: '限额',
    limitNames: {
      questions_per_minute: '每分钟提问',
      audio_seconds_per_hour: '每小时音频',
      daily_tokens_per_vendor: '每日用量',
      sessions_per_subject: '会话数',
    },
    opsTitle: 'Poise — 运维',
    opsSessions: '在线会话',
    opsNoSessions: '暂无在线会话。',
    opsTransitions: '级别变化',
    opsNoTransitions: '暂无级别变化。',
    opsBackends: '后端',
    opsNoBackends: '暂无后端状态。',
    opsDemo: '演示故障',
    opsDemoIntro: '向模拟供应商注入故障；会话会随健康检查切换级别。',
    opsClearAll: '清除全部故障',
    faults: {
      l1_down: 'L1 供应商宕机',
      l2_slow: '本地模型变慢',
      templates_down: '模板库不可用',
      whisper_down: 'Whisper 不可用',
    },
    on: '开',
    off: '关',
    opsSession: '会话',
    opsLevel: '级别',
    opsLang: '语言',
    opsSeniority: '资历',
    opsConnected: '在线',
    opsNode: '节点',
    opsUpdated: '更新',
    opsBackend: '后端',
    opsState: '状态',
    opsPass: '连续通过',
    opsFail: '连续失败',
    opsAt: '时间',
    opsChange: '变化',
    opsReason: '原因',
    yes: '是',
    no: '否',
    up: '正常',
    down: '故障',
    opsUpdatedAt: (t) => `更新于 ${t}`,
    opsUnreachable: '运维接口暂无响应，正在重试。',
    opsForbidden: '运维接口需要 ops token（在地址后加 #token=…）。',
    levelNames: {
      L1: '主模型',
      L2: '本地模型',
      L3: '模板',
      L4: '教练',
    },
  },
};

// chips are DESIGN.md's lite-mode chips; L1 has none. The server sends the
// same wording in `level` and `welcome`; the page uses this table when it
// coaches on its own (L4) and when the candidate switches language.
const chips = {
  zh: {
    L2: { text: '⚡ 轻量模式', hint: '主模型暂时不可用，已切换本地模型，回答可能略简洁' },
    L3: { text: '📋 模板模式', hint: '已切换离线模板，建议根据自身经历调整后表述' },
    L4: { text: '🧭 教练模式', hint: 'AI 服务暂时不可用，已切换答题节奏指引' },
  },
  en: {
    L2: { text: '⚡ Lite mode', hint: 'Main model unavailable, using the local model; answers may be briefer' },
    L3: { text: '📋 Template mode', hint: 'Switched to offline templates; adapt them to your own experience' },
    L4: { text: '🧭 Coach mode', hint: 'AI service temporarily unavailable; switched to answer-pacing guidance' },
  },
};

// pickLang returns "zh" for any zh* tag, else "en".
export function pickLang(tag) {
  return String(tag || '').toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

// t returns the strings of a language.
export function t(lang) {
  return strings[pickLang(lang)];
}

// chipFor returns the chip of a level in a language, or null at L1.
export function chipFor(level, lang) {
  return chips[pickLang(lang)][level] || null;
}

// applyStatic fills every element with data-i18n="key" (text) or
// data-i18n-placeholder / data-i18n-title (attributes) under root.
export function applyStatic(root, lang) {
  const s = t(lang);
  root.documentElement && (root.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en');
  for (const el of root.querySelectorAll('[data-i18n]')) {
    const v = s[el.dataset.i18n];
    if (typeof v === 'string') el.textContent = v;
  }
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) {
    const v = s[el.dataset.i18nPlaceholder];
    if (typeof v === 'string') el.placeholder = v;
  }
  for (const el of root.querySelectorAll('[data-i18n-title]')) {
    const v = s[el.dataset.i18nTitle];
    if (typeof v === 'string') el.title = v;
  }
}
