; Definitions in Bash: functions (`name() { … }` and `function name { … }`).

(function_definition name: (word) @name) @definition.function
