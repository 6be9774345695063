# Сообщения papayu на русском. У каждого сообщения есть двойник с тем же id в en.ftl (иначе
# падает тест). Коды ошибок и JSON не переводятся.

## Ошибки

error-word = ошибка
note-word = заметка
# Ошибка с кодом: код, что он значит, и исходное (английское) сообщение библиотеки.
coded = { $code }: { $meaning } — { $detail }

code-ERR_JSON_PARSE = ответ модели — не JSON
code-ERR_SCHEMA_VALIDATION = ответ не соответствует схеме протокола
code-ERR_UNKNOWN_KIND = у действия вид, которого нет в этой версии протокола
code-ERR_FIELD_NOT_ALLOWED = у действия поле, недопустимое для его вида
code-ERR_INVALID_PATH = путь пустой, абсолютный, выходит из проекта или содержит запрещённое имя
code-ERR_PATH_TOO_LONG = путь слишком длинный (240 байт, 255 на сегмент)
code-ERR_PROTECTED_PATH = путь указывает на секрет или на служебные файлы papayu
code-ERR_FORBIDDEN_PATH = у пути запрещённое расширение или он лежит в каталоге сборки или зависимостей
code-ERR_PATH_ESCAPES_ROOT = запись вышла бы за пределы проекта или через символическую ссылку
code-ERR_TOO_MANY_ACTIONS = в плане больше действий, чем разрешает политика
code-ERR_CONTENT_TOO_LARGE = содержимое превышает предел размера
code-ERR_CONTENT_REQUIRED = у действия, записывающего файл, нет содержимого
code-ERR_PSEUDO_BINARY = содержимое похоже на двоичное
code-ERR_PLACEHOLDER_CONTENT = вместо кода заглушка вроде «остальное без изменений»
code-ERR_PATCH_REQUIRED = у действия-патча нет патча или правок
code-ERR_PATCH_NOT_UNIFIED = патч — не unified diff
code-ERR_BASE_SHA256_INVALID = base_sha256 — не хеш sha256
code-ERR_EDIT_APPLY_FAILED = правку не удалось применить
code-ERR_RANGE_INVALID = диапазон строк не подходит к файлу
code-ERR_ACTION_CONFLICT = два действия несовместимо затрагивают один путь
code-ERR_APPLY_EMPTY_ACTIONS = в ответе нет действий, и он не говорит NO_CHANGES
code-ERR_PLAN_HAS_ACTIONS = в плане не должно быть действий
code-ERR_UPDATE_WITHOUT_BASE = модель правит файл, который ей не показывали
code-ERR_V2_UPDATE_EXISTING_FORBIDDEN = в протоколе v2 существующие файлы меняются патчами, а не UPDATE_FILE
code-ERR_LOCKED = с этим проектом уже работает другой papayu
code-ERR_BASE_MISMATCH = файл изменился с тех пор, как его видела модель; запросите план заново
code-ERR_EDIT_BASE_MISMATCH = правимый файл изменился с тех пор, как его видела модель
code-ERR_NON_UTF8_FILE = файл — не текст в UTF-8
code-ERR_PATCH_APPLY_FAILED = фрагмент патча не нашёл места в файле
code-ERR_EDIT_AMBIGUOUS = якорь или текст правки встречается больше одного раза
code-ERR_EDIT_ANCHOR_NOT_FOUND = якоря правки нет в файле
code-ERR_EDIT_BEFORE_NOT_FOUND = текста «before» нет рядом с якорем
code-ERR_FILE_EXISTS = создаваемый файл уже существует
code-ERR_CHECK_FAILED = проверка после записи не прошла; всё откачено
code-ERR_UNDO_CONFLICT = файлы изменились после той транзакции; --force всё равно отменит
code-ERR_ROLLBACK_CONFLICT = откат встретил более новые изменения; они оставлены, а исходные файлы сохранены отдельно
code-ERR_NOTHING_TO_UNDO = отменять нечего
code-ERR_NOTHING_TO_REDO = повторять нечего
code-ERR_IO = файловая операция не удалась
code-ERR_LLM_TIMEOUT = модель не ответила вовремя
code-ERR_LLM_HTTP = сервер модели ответил ошибкой
code-ERR_LLM_NETWORK = сервер модели недоступен
code-ERR_LLM_BAD_RESPONSE = сервер модели ответил в неожиданном виде
code-ERR_LLM_CONFIG = настройка модели неполна; см. `papayu doctor`
code-ERR_MODEL_NOT_FOUND = файла модели нет; `papayu model fetch` скачает модель по умолчанию
code-ERR_MODEL_INVALID = файл модели — не пригодная модель GGUF
code-ERR_NO_SAVED_PLAN = сохранённого плана нет; создайте его командой `papayu plan`
code-ERR_INVALID_CONFIG = неверное значение настройки
code-ERR_SECRET_IN_CONFIG = храните ключи API в окружении; в файле указывается имя переменной
code-ERR_MEMORY_PATCH_REJECTED = изменение настроек, предложенное моделью, отклонено
code-ERR_CANCELLED = отменено
code-ERR_USAGE = командную строку не удалось разобрать
code-ERR_CONFIRMATION_REQUIRED = нужно подтверждение, а машинный вывод не может спросить: добавьте --yes

## Проверка плана

plan-valid = { $file }: план корректен (протокол { $protocol })
plan-rejected = { $file }: отклонён, { $count ->
        [one] { $count } проблема
        [few] { $count } проблемы
       *[many] { $count } проблем
    } (протокол { $protocol })
plan-rejected-by-validation = { $file }: отклонён проверкой (протокол { $protocol }):
at-action-path = действие { $index } { $path }
at-action = действие { $index }
at-plan = план
violation = { $meaning } — { $detail }

## Планы, предпросмотр, применение

plan-title = План (протокол v{ $protocol }, трасса { $trace }):
list-risks = Риски
list-questions = Вопросы
list-verification = Проверка
list-commands = Команды
list-rollback = Откат
plan-unanswered = { $count ->
        [one] Модели не хватило ещё { $count } фрагмента контекста после предела раундов.
       *[other] Модели не хватило ещё { $count } фрагментов контекста после предела раундов.
    }
memory-remembered = Запомнено: { $key } = { $value }
memory-not-remembered = Не запомнено { $key }: { $reason }
plan-saved = План сохранён. `papayu apply` превратит его в изменения (сначала вы увидите предпросмотр).
fallback-line = откат протокола v{ $from } → v{ $to } ({ $reason }, на этапе { $stage })
nothing-to-change = Менять нечего.
actions-blocked = { $count ->
        [one] { $count } действие заблокировано
        [few] { $count } действия заблокированы
       *[many] { $count } действий заблокировано
    }; ничего не записано
confirm-apply = Применить эти изменения?
confirm-apply-deleting = Применить эти изменения, удалив { $paths }?
confirm-apply-with-deletions = Применить эти изменения (включая удаления)?
confirm-apply-one = Применить это изменение?
confirm-apply-one-deleting = Применить это изменение, удалив { $paths }?
confirm-run-command = Выполнить `{ $command }` в { $root }?
not-applied-saved = не применено; план и этот предпросмотр сохранены (`papayu apply` покажет его снова, не спрашивая модель, пока файлы не изменились)
not-applied = не применено; ничего не записано
applied-tx = Применено (транзакция { $tx }). `papayu undo` отменит.
applied = Применено.
applied-plan-tx = применено: транзакция { $tx } (отмена — `papayu undo`)
cancelled-nothing-changed = отменено; ничего не изменено
needs-yes = для этого изменения нужно подтверждение, а машинный вывод не может спросить: добавьте --yes
needs-yes-apply = для применения нужно подтверждение, а --json не может спросить: добавьте --yes
preview-no-change = {" "}(без изменений)
preview-bytes-changed = {" "}{ $old } → { $new } байт
preview-bytes-new = {" "}{ $new } байт
preview-bytes-removed = {" "}-{ $old } байт
preview-files = {" "}{ $count ->
        [one] { $count } файл
        [few] { $count } файла
       *[many] { $count } файлов
    }
preview-hunk = {"  "}фрагмент { $index } { $header } → { $tier } в строке { $line }
preview-blocked = ЗАБЛОКИРОВАНО
preview-summary = итого: создать { $create }, заменить { $update }, патч { $patch }, правка { $edit }, удалить { $delete }, mkdir { $mkdir }, rmdir { $rmdir }, заблокировано { $blocked }

## Отмена, повтор, история

undone = отменено (транзакцией { $tx }; `papayu redo` вернёт)
redone = повторено (транзакцией { $tx })
history-stack-undo = стек отмены ({ $count }):
history-stack-redo = стек повтора ({ $count }):
recover-nothing = восстанавливать нечего
recover-done = откачено незавершённых транзакций: { $rolled_back }, отброшено неполных журналов: { $discarded }
history-entry = {"  "}{ $tx } { $kind } { $count ->
        [one] { $count } путь
        [few] { $count } пути
       *[many] { $count } путей
    }: { $actions }

## Ход работы

stage-context = собираю контекст…
stage-requesting = спрашиваю модель ({ $attempt }, протокол v{ $protocol })…
stage-context-round = раунд контекста { $round }: запросов — { $count }…
stage-repair = ответ отклонён ({ $codes }); прошу исправить…
stage-retargeted = в `{ $from }` нет изменяемого текста; правка перенесена в `{ $to }` — единственный отправленный файл, где он есть
stage-merged-repeated = ответ повторяет действие над `{ $path }` ({ $count } раз): оно выполняется один раз
stage-merged-rewritten = ответ удаляет `{ $path }` и пишет его заново: это одно обновление файла
stage-merged-in-turn = ответ пишет `{ $path }` { $count } раз: записи прочитаны по очереди как одно обновление
stage-widened = ответ для `{ $path }` содержит только строки { $first }–{ $last }, изменённые: они заменяются, остальные { $kept } строк остаются
stage-added = ответ для `{ $path }` содержит только новое определение: оно добавляется в файл перед строкой { $line }, остальной файл остаётся
stage-unfenced = ответ для `{ $path }` пришёл внутри Markdown-блока кода; ограды блока не входят в файл
stage-unnumbered = в ответе для `{ $path }` остались номера строк `N|` из показанного файла; они не входят в файл
stage-restored = ответ для `{ $path }` читается с восстановленными строками файла: `\n` в строке, записанный как перевод строки, или весь текст на другой глубине отступа
stage-answer-as-patch = ответ для `{ $path }` — это diff файла, а не его новое содержимое: он применён как патч
stage-fallback = откат протокола v{ $from } → v{ $to } ({ $reason })…
stage-previewing = готовлю предпросмотр…
stage-testing-baseline = запускаю тесты до изменений: `{ $command }`…
stage-testing = изменение применено; запускаю тесты: `{ $command }`…
stage-tested = тесты прошли за { $time }: падает { $failing }
stage-attempt = попытка { $number } из { $of }…
stage-part = тесты отклонили изменение; пробуем его часть отдельно: фрагмент(ы) { $hunks } из { $of }…
stage-renamed = тесты отклонили изменение; пробуем его с начатым переименованием, доведённым до конца: { $names } (ещё в { $files } файл(ах))…
stage-added-alone = тесты отклонили изменение; пробуем только его новые определения: { $names } в { $files }…
stage-mutants = изменение модели не подтвердилось; papayu пробует до { $count } собственных малых правок в { $names }, каждую с тестами и откатом, если она не подтвердится…
stage-mutated = `{ $path }` строка { $line }: `{ $from }` → `{ $to }` — падавшие тесты проходят
stage-moved = пробуем начатый перенос: { $names } из { $from } в { $to }…
stage-renamed-alone = пробуем одно переименование, без остального изменения: { $names } (в { $files } файл(ах))…
stage-applying = применяю { $done }/{ $total } { $item }
chars-received = · получено символов: { $count }
check-passed = проверка `{ $command }` пройдена
check-failed = проверка `{ $command }`: { $status }

## Запуск (run)

run-tests-given = задана через --test
run-tests-memory = из памяти проекта
run-tests-detected = найдена: { $reason }
run-tests-configured = из настроек
run-tests = тесты: `{ $command }` ({ $source })
run-tests-none = тесты: неизвестны; изменение нельзя проверить
run-before-green = до изменений: проходит { $passing }, падающих нет ({ $seconds } с)
run-before-red = до изменений: падает { $failing } ({ $names }), проходит { $passing } ({ $seconds } с)
run-verified-all = проверено: тесты проходят
run-verified-fixed = проверено: теперь проходят { $names }
run-rolled-back = не подтверждено, откачено: { $reason }
run-no-change-proposed = изменений не предложено
run-not-applied = не применено
run-attempt = попытка { $number }{ $what }: { $result }
run-before-model = 0, до обращения к модели
run-part = часть: фрагмент(ы) { $hunks } из { $of }
run-part-keeping = часть: фрагмент(ы) { $hunks } из { $of }, с сохранёнными строками, которые заменял(и) фрагмент(ы) { $keeping }
run-renamed = переименование доведено до конца: { $names }, ещё в { $files } файл(ах)
run-added = только новые определения: { $names } в { $files }
run-mutant = собственная правка papayu в `{ $path }`, строка { $line } (`{ $from }` → `{ $to }`), { $tried }-я по счёту
run-moved = перенесено { $names } из { $from } в { $to }, импорты ещё в { $files } файл(ах)
run-renamed-alone = одно переименование: { $names }, в { $files } файл(ах)
run-solved = проверенное исправление применено{ $tx }; `papayu undo` отменит
run-unverified = применено без проверки{ $tx }: { $reason }
run-tx = {" "}(транзакция { $tx })
run-no-test-command = нет команды тестов
run-not-solved = не решено: { $reason }
run-unchanged = ничего не подтвердилось; проект не изменён
run-nothing-to-change = менять нечего: тесты уже проходят
run-declined = отказано: ничего не записано
run-usage = вызовов модели: { $calls }, токенов: { $input } на входе / { $output } на выходе

## Чат

chat-title = papayu chat — { $root }
chat-help =
    Опишите цель — получите план. «ok» / «да» применяет сохранённый план (сначала предпросмотр).
    Префикс «plan:» или «apply:» выбирает режим.
    Команды: /undo, /redo, /history, /diff (последнее показанное изменение), /discard (забыть сохранённый план), /help, /quit.
    Ctrl-C прерывает текущий шаг, Ctrl-D — выход; ↑/↓ — предыдущие строки.
chat-unknown-command = неизвестная команда { $command }; список — /help
chat-undone = Отменено (транзакция { $tx }).
chat-redone = Повторено (транзакция { $tx }).
chat-nothing-applied = {"  "}(пока ничего не применено)
chat-no-diff = (изменений ещё не показывали)
chat-cancelled = отменено; ничего не записано
chat-say-ok = Скажите «ok», чтобы применить этот план.
chat-restored = Восстановлен ожидающий план (режим { $mode }, протокол v{ $protocol }; «ok» применит его): { $goal }
chat-restored-stale = Сохранённый план устарел: { $count ->
        [one] { $count } файл, на котором он основан, изменился
       *[other] файлы, на которых он основан ({ $count }), изменились
    } ({ $paths }). Применять его нельзя: опишите цель заново, чтобы получить новый план, или забудьте его командой /discard.
chat-discarded = Сохранённый план забыт.
chat-nothing-to-discard = Сохранённого плана нет.

## Таблицы

col-metric = показатель
col-value = значение
col-criterion = критерий
col-threshold = порог
col-result = итог
col-check = проверка
col-status = состояние
col-detail = подробности
col-count = число
col-from = откуда
col-setting = настройка (действующая)
col-provider = провайдер
col-model = модель
col-reachable = доступен
col-structured = структурированный вывод
col-latency = задержка
col-problem = проблема
col-day = день (UTC)
col-calls = вызовы
col-fallback-rate = доля откатов
col-repair-success = успешные исправления
col-error-code = код ошибки
col-fallback-reason = причина отката
col-violation-code = код нарушения
yes = да
no = нет

## Диагностика (doctor)

doctor-all-usable = все провайдеры пригодны
doctor-some-unusable = не все провайдеры пригодны
doctor-local-usable = локальный провайдер пригоден
doctor-local-unusable = локальный провайдер непригоден
doctor-no-provider = Провайдер не настроен: { $problem }

## Отчёт (report)

report-title = отчёт papayu по { $root }{ $window }
report-last = {" "}(за последние { $since })
report-no-traces = трасс пока нет: запустите papayu с PAPAYU_TRACE=1, чтобы записывать их
report-traces = трассы
report-plan-calls = вызовы PLAN
report-apply-calls = вызовы APPLY (применено)
report-fallbacks = откаты протокола
report-repairs = исправления (принято)
report-context-mean = размер контекста, в среднем
report-context-chars = { $count ->
        [one] { $count } символ
        [few] { $count } символа
       *[many] { $count } символов
    }
report-cache-hits = попадания в кэш контекста
report-unreadable = нечитаемые трассы
report-window = окно
report-all-traces = все трассы
report-fallback-reasons = Причины откатов
report-fallback-stages = Этапы откатов
report-top-paths = Пути, чаще всего получавшие хеш при исправлении:
report-graduate = ВЫПУСК: протокол v2 справляется сам; задайте PAPAYU_PROTOCOL_FALLBACK_TO_V1=0
report-keep-fallback = ОТКАТ ОСТАЁТСЯ: один из критериев ниже не выполнен
report-no-verdict = ВЕРДИКТА ПОКА НЕТ: вызовов APPLY меньше окна
report-graduation = Выпуск по последним { $window } вызовам APPLY (seed 001): { $verdict }
report-criterion-ok = ок{"  "}
report-criterion-fail = НЕТ{" "}
report-proposals-by = Предложения модели { $model }{ $repaired }:
report-after-repair = {" "}(после одного исправления)
report-why = почему: { $text }
report-expect = ожидается: { $text }
# Критерии выпуска из seed 001, по их стабильному id (`Criterion::id` в papayu-agent).
criterion-apply_calls = полное окно из 100 вызовов APPLY
criterion-fallback_rate_excluding_non_utf8 = доля откатов (без ERR_NON_UTF8_FILE) < 1%
criterion-patch_apply_failed_rate = ERR_PATCH_APPLY_FAILED меньше чем в 1% вызовов
criterion-patch_apply_failed_repair_over_fallback = ERR_PATCH_APPLY_FAILED чаще лечится исправлением, чем откатом
criterion-update_existing_forbidden = ни одного отката из-за ERR_V2_UPDATE_EXISTING_FORBIDDEN

## analyze
analyze-project = проект { $root }
analyze-size = { $files } { $files ->
    [one] файл
    [few] файла
   *[many] файлов
}, { $bytes } { $bytes ->
    [one] байт
    [few] байта
   *[many] байт
}{ $truncated ->
    [yes] {" "}(подсчёт остановлен на пределе)
   *[no] {""}
}
analyze-languages = языки:
analyze-files-word = { $count ->
    [one] файл{"  "}
    [few] файла{" "}
   *[many] файлов
}
analyze-lines-word = { $count ->
    [one] строка
    [few] строки
   *[many] строк
}
analyze-none = нет
analyze-none-detected = не найдена
analyze-present = есть
analyze-manifests = манифесты: { $list }
analyze-test-command = команда тестов: { $command }
analyze-architecture = описание архитектуры: { $state }
analyze-findings = находки: { $count }
analyze-hot-spots = горячие точки (транзакции papayu):

## config
config-none = (нет)
config-removed = удалён
config-absent = (нет файла)
config-env-overrides = задана { $var }, она важнее файлов
config-source-default = по умолчанию
config-source-user = пользователь
config-source-project = проект
config-source-env = окружение
config-source-flag = флаг

## memory
memory-user-prefs = настройки пользователя: { $path }
memory-project-prefs = настройки проекта:     { $path }
memory-empty = (ничего не задано: модель не видит блока памяти)
memory-model-sees = Что видит модель:
memory-removed = удалён
memory-was-not-set = не был задан

## model
model-catalogue = каталог (`papayu model fetch ИМЯ`):
model-default = (по умолчанию)
model-cached = [скачана]
model-from = источник: { $source }
model-cache = кэш моделей: { $dir }
model-cache-empty = (пусто: `papayu model fetch` скачает модель по умолчанию, { $name })
model-ok-verified = в порядке, sha256 проверен
model-ok = в порядке
model-problem = ПРОБЛЕМА: { $problem }
model-part = (часть { $part } из { $parts })
model-downloading = скачиваю { $file }{ $of }, { $size } МБ, из { $url }…
model-installed = { $name } установлена в { $path } (sha256 проверен)
model-already-cached = { $name } уже скачана: { $path } (sha256 проверен)
model-warming = готовлю кэш промптов локальной модели (один раз, несколько секунд)…
model-warmed = кэш промптов готов (новых: { $written }, { $seconds } с)
model-warm-failed = не удалось подготовить кэш промптов ({ $error }); первый запуск декодирует промпт сам

## commands, trace, findings, ask, recover
commands-refused = отказано: { $error }
commands-timed-out = время вышло
commands-exit = код выхода { $code }
commands-killed = процесс убит
commands-none = предложенных команд нет
trace-none = трасс нет (PAPAYU_TRACE=1 включает их запись)
findings-none = находок нет (обновите с --refresh или импортируйте файл SARIF с --import)
ask-raw = сырой ответ ({ $format }):
ask-parsed = разобрано:
ask-rejected = отклонено:
recover-left-alone = не тронут `{ $dir }`: { $reason }
recover-unfinished = откат { $tx } не завершён: { $error }; запустите `papayu recover` снова, когда это будет исправлено

## ui
ui-opening = Открываю в браузере через { $page } (эту страницу можете прочесть только вы; она удаляется, как только UI подключится)
ui-sandboxed-browser = (браузеру в песочнице, snap или flatpak, её читать может быть запрещено: тогда вставьте URL выше)
ui-no-browser = браузер не открыт ({ $error }); откройте URL выше сами
ui-project = проект: { $project }
ui-stop-hint = (Ctrl-C останавливает сервер; любой, у кого есть этот URL, может управлять papayu от вашего имени)

## apply-patch, batch, sandbox-exec, trends
apply-patch-hunk = фрагмент { $index }: { $tier } на строке { $line } ({ $header })
apply-patch-applied-to = применено к { $path }
apply-patch-rejected = отклонено
apply-patch-nothing-written = отклонено, ничего не записано
apply-patch-applied-tx = применено: транзакция { $tx } (отменить: `papayu undo`)
batch-goal = цель { $index }/{ $total }: { $goal }
batch-col-outcome = итог
batch-col-attempts = попытки
batch-col-code = код
batch-col-goal = цель
batch-succeeded = удалось { $ok } из { $total } { $total ->
    [one] цели
   *[other] целей
}
sandbox-unconfined = ограничить нельзя ({ $reason }); запуск без ограничений
trends-header = ({ $cards ->
    [one] { $cards } карточка
    [few] { $cards } карточки
   *[many] { $cards } карточек
} из { $domains ->
    [one] { $domains } домена
   *[other] { $domains } доменов
})
# Суффикс вопроса да/нет: ответ «д» или «да» (а также y/yes), Enter — нет.
confirm-suffix = [д/Н]

## doctor
doctor-set-provider = Задайте PAPAYU_LLM_API_URL и PAPAYU_LLM_MODEL (и PAPAYU_LLM_API_KEY для облачных API)
doctor-or-local = или запустите локальную модель: scripts/local-llm.sh serve 8080, затем
doctor-checks-run = проверки и тесты запускаются: { $how }
doctor-integrations = интеграции: { $section }
doctor-local-provider = провайдер local (llama.cpp в процессе){ $implicit ->
    [yes] , выбран, потому что провайдер не настроен
   *[no] {""}
}
doctor-model-file = файл модели: { $path }
doctor-model-size = размер: { $size } МБ
doctor-ok = в порядке
doctor-problem-word = ПРОБЛЕМА
doctor-mismatch = НЕ СОВПАДАЕТ
doctor-gguf-header = заголовок GGUF: { $state }
doctor-sha256 = sha256 (модель по умолчанию): { $state }
doctor-problem = проблема: { $problem }
doctor-built-without-local = этот papayu собран без локального провайдера: пересоберите с `--features local`
doctor-probe = проба: { $probe }
doctor-configuration = конфигурация (действующая, с источником каждого значения):
unit-mb = МБ
