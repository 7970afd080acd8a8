; TypeScript's additions to grammars/javascript/references.scm: annotations and interface bases.

(type_annotation) @type
(type_arguments) @type
(extends_type_clause) @inherit
