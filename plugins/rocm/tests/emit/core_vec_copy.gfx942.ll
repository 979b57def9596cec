; tilec rocm backend: amdgcn-amd-amdhsa for gfx942
source_filename = "tilec"
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @vec_copy(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %p2) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 128}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %r2 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r2
  %cnt3 = alloca i64, addrspace(5)
  %v0 = mul i32 %bid.x, 512
  %v1 = mul i32 %tid, 4
  %v2 = add i32 %v0, %v1
  store i32 %v2, ptr addrspace(5) %r1
  %v3 = load i32, ptr addrspace(5) %r1
  %v4 = add i32 %v3, 4
  %v5 = icmp sle i32 %v4, %p2
  br i1 %v5, label %then0, label %else2
then0:
  %v6 = load i32, ptr addrspace(5) %r1
  %v7 = sext i32 %v6 to i64
  %v8 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v7
  %v9 = load <4 x float>, ptr addrspace(1) %v8, align 16
  %v10 = extractelement <4 x float> %v9, i32 0
  %v11 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 0
  store float %v10, ptr addrspace(5) %v11
  %v12 = extractelement <4 x float> %v9, i32 1
  %v13 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 1
  store float %v12, ptr addrspace(5) %v13
  %v14 = extractelement <4 x float> %v9, i32 2
  %v15 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 2
  store float %v14, ptr addrspace(5) %v15
  %v16 = extractelement <4 x float> %v9, i32 3
  %v17 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 3
  store float %v16, ptr addrspace(5) %v17
  %v18 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 0
  %v19 = load float, ptr addrspace(5) %v18
  %v20 = insertelement <4 x float> poison, float %v19, i32 0
  %v21 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 1
  %v22 = load float, ptr addrspace(5) %v21
  %v23 = insertelement <4 x float> %v20, float %v22, i32 1
  %v24 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 2
  %v25 = load float, ptr addrspace(5) %v24
  %v26 = insertelement <4 x float> %v23, float %v25, i32 2
  %v27 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 3
  %v28 = load float, ptr addrspace(5) %v27
  %v29 = insertelement <4 x float> %v26, float %v28, i32 3
  %v30 = load i32, ptr addrspace(5) %r1
  %v31 = sext i32 %v30 to i64
  %v32 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 %v31
  store <4 x float> %v29, ptr addrspace(1) %v32, align 16
  br label %endif1
else2:
  %v33 = sext i32 4 to i64
  store i64 0, ptr addrspace(5) %cnt3
  br label %loop3
loop3:
  %v34 = load i64, ptr addrspace(5) %cnt3
  %v35 = icmp slt i64 %v34, %v33
  br i1 %v35, label %body4, label %exit5
body4:
  %v36 = trunc i64 %v34 to i32
  %v37 = mul i32 %v36, 1
  %v38 = add i32 0, %v37
  store i32 %v38, ptr addrspace(5) %r2
  %v39 = load i32, ptr addrspace(5) %r1
  %v40 = load i32, ptr addrspace(5) %r2
  %v41 = add i32 %v39, %v40
  %v42 = icmp slt i32 %v41, %p2
  br i1 %v42, label %do6, label %zero8
do6:
  %v43 = load i32, ptr addrspace(5) %r1
  %v44 = load i32, ptr addrspace(5) %r2
  %v45 = add i32 %v43, %v44
  %v46 = sext i32 %v45 to i64
  %v47 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v46
  %v48 = load float, ptr addrspace(1) %v47, align 4
  %v49 = load i32, ptr addrspace(5) %r2
  %v50 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 %v49
  store float %v48, ptr addrspace(5) %v50
  br label %done7
zero8:
  %v51 = load i32, ptr addrspace(5) %r2
  %v52 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 %v51
  store float 0.0, ptr addrspace(5) %v52
  br label %done7
done7:
  %v53 = load i32, ptr addrspace(5) %r1
  %v54 = load i32, ptr addrspace(5) %r2
  %v55 = add i32 %v53, %v54
  %v56 = icmp slt i32 %v55, %p2
  br i1 %v56, label %do9, label %done10
do9:
  %v57 = load i32, ptr addrspace(5) %r2
  %v58 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 %v57
  %v59 = load float, ptr addrspace(5) %v58
  %v60 = load i32, ptr addrspace(5) %r1
  %v61 = load i32, ptr addrspace(5) %r2
  %v62 = add i32 %v60, %v61
  %v63 = sext i32 %v62 to i64
  %v64 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 %v63
  store float %v59, ptr addrspace(1) %v64, align 4
  br label %done10
done10:
  %v65 = load i64, ptr addrspace(5) %cnt3
  %v66 = add i64 %v65, 1
  store i64 %v66, ptr addrspace(5) %cnt3
  br label %loop3, !llvm.loop !2
exit5:
  br label %endif1
endif1:
  ret void
}

define amdgpu_kernel void @vec_copy_unguarded(ptr addrspace(1) %p0, ptr addrspace(1) %p1, i32 %p2) #1 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x(), !range !{i32 0, i32 128}
  %lane = and i32 %tid, 63
  %wave = lshr i32 %tid, 6
  %bid.x = call i32 @llvm.amdgcn.workgroup.id.x()
  %bid.y = call i32 @llvm.amdgcn.workgroup.id.y()
  %bid.z = call i32 @llvm.amdgcn.workgroup.id.z()
  %r0 = alloca [4 x float], align 16, addrspace(5)
  store [4 x float] zeroinitializer, ptr addrspace(5) %r0, align 16
  %r1 = alloca i32, addrspace(5)
  store i32 0, ptr addrspace(5) %r1
  %v0 = mul i32 %bid.x, 512
  %v1 = mul i32 %tid, 4
  %v2 = add i32 %v0, %v1
  store i32 %v2, ptr addrspace(5) %r1
  %v3 = load i32, ptr addrspace(5) %r1
  %v4 = sext i32 %v3 to i64
  %v5 = getelementptr inbounds float, ptr addrspace(1) %p0, i64 %v4
  %v6 = load <4 x float>, ptr addrspace(1) %v5, align 16
  %v7 = extractelement <4 x float> %v6, i32 0
  %v8 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 0
  store float %v7, ptr addrspace(5) %v8
  %v9 = extractelement <4 x float> %v6, i32 1
  %v10 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 1
  store float %v9, ptr addrspace(5) %v10
  %v11 = extractelement <4 x float> %v6, i32 2
  %v12 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 2
  store float %v11, ptr addrspace(5) %v12
  %v13 = extractelement <4 x float> %v6, i32 3
  %v14 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 3
  store float %v13, ptr addrspace(5) %v14
  %v15 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 0
  %v16 = load float, ptr addrspace(5) %v15
  %v17 = insertelement <4 x float> poison, float %v16, i32 0
  %v18 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 1
  %v19 = load float, ptr addrspace(5) %v18
  %v20 = insertelement <4 x float> %v17, float %v19, i32 1
  %v21 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 2
  %v22 = load float, ptr addrspace(5) %v21
  %v23 = insertelement <4 x float> %v20, float %v22, i32 2
  %v24 = getelementptr inbounds float, ptr addrspace(5) %r0, i32 3
  %v25 = load float, ptr addrspace(5) %v24
  %v26 = insertelement <4 x float> %v23, float %v25, i32 3
  %v27 = load i32, ptr addrspace(5) %r1
  %v28 = sext i32 %v27 to i64
  %v29 = getelementptr inbounds float, ptr addrspace(1) %p1, i64 %v28
  store <4 x float> %v26, ptr addrspace(1) %v29, align 16
  ret void
}

declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()

attributes #0 = { "amdgpu-flat-work-group-size"="128,128" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }
attributes #1 = { "amdgpu-flat-work-group-size"="128,128" "uniform-work-group-size"="true" "target-cpu"="gfx942" "denormal-fp-math"="ieee,ieee" "denormal-fp-math-f32"="ieee,ieee" }

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
!1 = !{!"llvm.loop.unroll.full"}
!2 = distinct !{!2, !1}
