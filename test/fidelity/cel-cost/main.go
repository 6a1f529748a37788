// cel-cost prints the runtime CEL cost the Kubernetes API server counts for ValidatingAdmissionPolicy
// expressions: Forewarn's fidelity oracle for its own cost model (services/controller/verdicts/cel).
//
// It compiles and evaluates exactly as the API server's validating admission policy plugin does
// (k8s.io/apiserver/pkg/admission/plugin/policy/validating/plugin.go): a composition environment over
// environment.MustBaseEnvSet(DefaultCompatibilityVersion(), strict cost), variables compiled and
// stored, validations as one condition evaluated with ForInput under RuntimeCELCostBudget. The cost of
// one run is the budget minus what ForInput leaves; each expression's own cost comes from running it
// alone. Input: a JSON table of cases on stdin; output: one JSON line per case on stdout.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

type namedExpression struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type testCase struct {
	Name        string            `json:"name"`
	Validations []string          `json:"validations"`
	Variables   []namedExpression `json:"variables"`
	Object      map[string]any    `json:"object"`
	OldObject   map[string]any    `json:"oldObject"`
	Params      map[string]any    `json:"params"`
	Namespace   map[string]any    `json:"namespace"`
	Operation   string            `json:"operation"`
}

type expressionResult struct {
	Expression string `json:"expression"`
	Cost       int64  `json:"cost"`
	Value      any    `json:"value,omitempty"`
	Error      string `json:"error,omitempty"`
}

type caseResult struct {
	Name string `json:"name"`
	// Cost of all validations in order, as one ForInput with an unlimited overall budget (each
	// expression still stops at PerCallLimit).
	TotalCost int64 `json:"totalCost"`
	// Whether ForInput under RuntimeCELCostBudget runs out of budget.
	BudgetExceeded bool               `json:"budgetExceeded"`
	BudgetError    string             `json:"budgetError,omitempty"`
	Expressions    []expressionResult `json:"expressions"`
	Error          string             `json:"error,omitempty"`
	PerCallLimit   int64              `json:"perCallLimit"`
	Budget         int64              `json:"budget"`
}

func toVariables(variables []namedExpression) []plugincel.NamedExpressionAccessor {
	accessors := make([]plugincel.NamedExpressionAccessor, 0, len(variables))
	for _, variable := range variables {
		accessors = append(accessors, &validating.Variable{Name: variable.Name, Expression: variable.Expression})
	}
	return accessors
}

func toValidations(expressions []string) []plugincel.ExpressionAccessor {
	accessors := make([]plugincel.ExpressionAccessor, 0, len(expressions))
	for _, expression := range expressions {
		accessors = append(accessors, &validating.ValidationCondition{Expression: expression})
	}
	return accessors
}

type evaluation struct {
	results   []plugincel.EvaluationResult
	remaining int64
	err       error
}

func evaluate(envTemplate *plugincel.CompositionEnv, c testCase, expressions []string, budget int64) (evaluation, error) {
	hasParams := c.Params != nil
	options := plugincel.OptionalVariableDeclarations{HasParams: hasParams, StrictCost: true}
	compiler := plugincel.NewCompositedCompilerFromTemplate(envTemplate)
	compiler.CompileAndStoreVariables(toVariables(c.Variables), options, environment.StoredExpressions)
	condition := compiler.CompileCondition(toValidations(expressions), options, environment.StoredExpressions)

	object := &unstructured.Unstructured{Object: c.Object}
	var oldObject runtime.Object
	if c.OldObject != nil {
		oldObject = &unstructured.Unstructured{Object: c.OldObject}
	}
	gvk := object.GroupVersionKind()
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: "objects"}
	operation := admission.Create
	if c.Operation != "" {
		operation = admission.Operation(c.Operation)
	}
	attributes := admission.NewAttributesRecord(object, oldObject, gvk, object.GetNamespace(), object.GetName(), gvr, "", operation, nil, false, nil)
	versioned := &admission.VersionedAttributes{Attributes: attributes, VersionedObject: object, VersionedOldObject: oldObject, VersionedKind: gvk}
	request := plugincel.CreateAdmissionRequest(attributes, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	var params runtime.Object
	if hasParams {
		params = &unstructured.Unstructured{Object: c.Params}
	}
	var namespace *corev1.Namespace
	if c.Namespace != nil {
		namespace = &corev1.Namespace{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(c.Namespace, namespace); err != nil {
			return evaluation{}, err
		}
	}
	results, remaining, err := condition.ForInput(context.Background(), versioned, request, plugincel.OptionalVariableBindings{VersionedParams: params}, namespace, budget)
	return evaluation{results: results, remaining: remaining, err: err}, nil
}

func run(envTemplate *plugincel.CompositionEnv, c testCase) caseResult {
	result := caseResult{Name: c.Name, PerCallLimit: celconfig.PerCallLimit, Budget: celconfig.RuntimeCELCostBudget}
	unlimited, err := evaluate(envTemplate, c, c.Validations, math.MaxInt64)
	if err != nil {
		result.Error = err.Error()
		return result
	}
	if unlimited.err != nil {
		result.Error = unlimited.err.Error()
		return result
	}
	result.TotalCost = math.MaxInt64 - unlimited.remaining
	budgeted, err := evaluate(envTemplate, c, c.Validations, celconfig.RuntimeCELCostBudget)
	if err == nil && budgeted.err != nil {
		result.BudgetExceeded = true
		result.BudgetError = budgeted.err.Error()
	}
	for _, expression := range c.Validations {
		alone, err := evaluate(envTemplate, c, []string{expression}, math.MaxInt64)
		entry := expressionResult{Expression: expression}
		if err != nil {
			entry.Error = err.Error()
		} else if alone.err != nil {
			entry.Error = alone.err.Error()
		} else {
			entry.Cost = math.MaxInt64 - alone.remaining
			if len(alone.results) == 1 {
				if alone.results[0].Error != nil {
					entry.Error = alone.results[0].Error.Error()
				} else if alone.results[0].EvalResult != nil {
					entry.Value = alone.results[0].EvalResult.Value()
				}
			}
		}
		result.Expressions = append(result.Expressions, entry)
	}
	return result
}

func main() {
	var table struct {
		Cases []testCase `json:"cases"`
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cel-cost: reading the table: %v\n", err)
		os.Exit(2)
	}
	// Kubernetes' own JSON decoding: whole numbers become int64, as in objects the API server decodes.
	if err := kjson.Unmarshal(input, &table); err != nil {
		fmt.Fprintf(os.Stderr, "cel-cost: reading the table: %v\n", err)
		os.Exit(2)
	}
	envTemplate, err := plugincel.NewCompositionEnv(plugincel.VariablesTypeName, environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion(), true))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cel-cost: environment: %v\n", err)
		os.Exit(2)
	}
	output := bufio.NewWriter(os.Stdout)
	defer output.Flush()
	encoder := json.NewEncoder(output)
	for _, c := range table.Cases {
		if err := encoder.Encode(run(envTemplate, c)); err != nil {
			fmt.Fprintf(os.Stderr, "cel-cost: writing: %v\n", err)
			os.Exit(2)
		}
	}
}
