; Definitions shared by JavaScript, TypeScript and TSX (their grammars name these nodes alike);
; definitions.scm of javascript/ and typescript/ add what differs. @definition.<kind> is the whole
; definition, @name its name.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
; A method in an object literal is a function; inside a class or an object (below) the outline
; makes it a method.
(method_definition name: [(property_identifier) (private_property_identifier) (computed_property_name)] @name) @definition.function

; const f = () => …, var g = function () { … }
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function

; Objects holding functions (`const api = { get() {…}, put: () => … }`): their functions are
; methods of the object.
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(object (method_definition)) (object (pair value: [(arrow_function) (function_expression)]))])) @definition.object
(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

; Top-level UPPER_CASE constants.
(program
  (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
(export_statement
  (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
