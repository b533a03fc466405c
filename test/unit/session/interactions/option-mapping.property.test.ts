import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NativePermissionOption } from "../../../../src/session/interactions/native-requests.js";
import { findOffered, mapPermissionOptions } from "../../../../src/session/interactions/permission-options.js";
import { nativeAnswerContent } from "../../../../src/session/interactions/question-form.js";

const STANDARD = new Set(["allow_once", "allow_always", "reject_once", "reject_always"]);

const option: fc.Arbitrary<NativePermissionOption> = fc.record({
  optionId: fc.string({ minLength: 1, maxLength: 6 }),
  name: fc.string({ maxLength: 8 }),
  kind: fc.constantFrom("allow_once", "allow_always", "deny_once", "reject_once", "allow", "deny", "allow_project", "weird"),
  response: fc.record(
    {
      decision: fc.constantFrom("allow", "deny", "escalate", "modify", "other"),
      permissionUpdates: fc.array(fc.anything(), { maxLength: 2 }),
    },
    { requiredKeys: ["decision"] },
  ),
});

describe("option mapping properties", () => {
  it("emits only standard kinds, keeps native ids/names and derives kind from the response", () => {
    fc.assert(
      fc.property(fc.array(option, { maxLength: 8 }), (options) => {
        const mapping = mapPermissionOptions(options);
        for (const { native, acp } of mapping.offered) {
          expect(STANDARD.has(acp.kind)).toBe(true);
          expect(acp.optionId).toBe(native.optionId);
          const always = (native.response.permissionUpdates?.length ?? 0) > 0;
          const expected =
            native.response.decision === "allow" ? (always ? "allow_always" : "allow_once") : always ? "reject_always" : "reject_once";
          expect(acp.kind).toBe(expected);
        }
        expect(mapping.offered.length + mapping.skipped.length).toBe(options.length);
        if (mapping.denyOption) expect(mapping.denyOption.response.decision).toBe("deny");
        else expect(options.some((o) => o.response.decision === "deny")).toBe(false);
      }),
    );
  });

  it("an id that is not offered never resolves", () => {
    fc.assert(
      fc.property(fc.array(option, { maxLength: 6 }), fc.string(), (options, guess) => {
        const mapping = mapPermissionOptions(options);
        const found = findOffered(mapping, guess);
        if (found) {
          expect(found.native.optionId).toBe(guess);
          expect(["allow", "deny"]).toContain(found.native.response.decision);
        } else {
          expect(mapping.offered.some((m) => m.native.optionId === guess)).toBe(false);
        }
      }),
    );
  });

  it("rebuilt answers only ever contain offered values", () => {
    const question = fc.record({
      question: fc.string({ maxLength: 5 }),
      multiSelect: fc.boolean(),
      options: fc.array(fc.record({ value: fc.string({ maxLength: 3 }) }), { minLength: 1, maxLength: 4 }),
    });
    fc.assert(
      fc.property(
        fc.array(question, { minLength: 1, maxLength: 3 }),
        fc.dictionary(
          fc.string({ maxLength: 9 }),
          fc.oneof(fc.string({ maxLength: 3 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 })),
        ),
        (questions, form) => {
          const result = nativeAnswerContent(questions, form);
          if (!result.ok) return;
          questions.forEach((q, i) => {
            const allowed = new Set(q.options.map((o) => o.value));
            const v = result.content[`answer_${i}`];
            const values = Array.isArray(v) ? v : [v];
            expect(values.length).toBeGreaterThan(0);
            for (const x of values) expect(allowed.has(x as string)).toBe(true);
          });
          expect("answer" in result.content).toBe(questions.length === 1);
        },
      ),
    );
  });
});
